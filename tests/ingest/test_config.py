"""``GET /i/config`` and the CORS rules of the SDK paths (PROTOCOL.md)."""

from __future__ import annotations

import httpx
import pytest

from sightline.autocapture.settings import DEFAULT_EXTENSIONS
from tests.ingest.helpers import CHROME, Site, Visitor
from tests.support.http import TLS
from tests.support.server import LiveServer


def test_config_tells_the_sdk_which_connections_are_on(visitor: Visitor) -> None:
    response = visitor.config()
    assert response.status_code == 200
    assert response.json() == {
        "events": "ready",
        "recording": {"enabled": False, "sample_rate": 1.0},
        "feedback": True,
        "cookieless": False,
        "capture": [],
        "file_download_extensions": list(DEFAULT_EXTENSIONS),
        "surveys": [],  # published surveys that open by themselves (surveys.auto_open)
    }
    assert response.headers["access-control-allow-origin"] == visitor.site.origin
    assert "Origin" in response.headers["vary"]
    assert "access-control-allow-credentials" not in response.headers
    assert response.headers["cache-control"] == "no-store"


def test_config_follows_the_owner_s_recording_settings_at_once(visitor: Visitor) -> None:
    visitor.site.change(recording_enabled=True, recording_sample_rate=0.25)
    assert visitor.config().json()["recording"] == {"enabled": True, "sample_rate": 0.25}


def test_a_cookieless_sites_config_turns_recording_and_surveys_off(visitor: Visitor) -> None:
    visitor.site.change(recording_enabled=True, cookieless=True)
    config = visitor.config().json()
    assert (config["cookieless"], config["recording"]["enabled"], config["feedback"]) == (True, False, False)


def test_config_for_an_unknown_key_is_404(ingest_server: LiveServer, site: Site) -> None:
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url, headers={"Origin": site.origin}) as client:
        response = client.get("/i/config", params={"key": "unknown-key-123"})
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "unknown_site"
        missing = client.get("/i/config")
        assert missing.status_code == 422
        assert missing.json()["error"]["field"] == "key"


@pytest.mark.parametrize("origin", ["https://evil.example", "http://localhost:2", "null"])
def test_config_from_another_origin_is_403_and_readable_so_the_sdk_stops_asking(
    ingest_server: LiveServer, site: Site, origin: str
) -> None:
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url) as client:
        response = client.get("/i/config", params={"key": site.key}, headers={"Origin": origin})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "origin_not_allowed"
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers


def test_config_without_origin_or_referer_is_403(ingest_server: LiveServer, site: Site) -> None:
    response = httpx.get(f"{ingest_server.base_url}/i/config", params={"key": site.key})
    assert response.status_code == 403


def test_a_preflight_from_a_site_s_origin_allows_json_posts(visitor: Visitor) -> None:
    response = visitor.client.options(
        "/i/events",
        headers={"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"},
    )
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == visitor.site.origin
    assert response.headers["access-control-allow-methods"] == "POST"
    assert response.headers["access-control-allow-headers"].lower() == "content-type"
    assert "access-control-allow-credentials" not in response.headers
    assert "Origin" in response.headers["vary"]


def test_a_preflight_from_an_unknown_origin_is_refused(ingest_server: LiveServer, site: Site) -> None:
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url) as client:
        for origin in [
            "https://evil.example",
            f"http://localhost:{int(site.domain.split(':')[1]) + 50000 % 9}",
        ]:
            response = client.options(
                "/i/events", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
            )
            assert response.status_code == 403
            assert "access-control-allow-origin" not in response.headers


def test_a_json_post_after_its_preflight_is_accepted(visitor: Visitor) -> None:
    from tests.ingest.helpers import batch

    response = visitor.client.post("/i/events", json=batch(visitor.site))
    assert response.status_code == 202


def test_a_new_site_is_known_to_preflights_at_once(
    ingest_server: LiveServer, ingest_owner: httpx.Client
) -> None:
    origin = "http://fresh.localhost:7777"
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url, headers={"User-Agent": CHROME}) as client:
        request = {"Origin": origin, "Access-Control-Request-Method": "POST"}
        assert client.options("/i/events", headers=request).status_code == 403
        Site.create(ingest_owner, "fresh.localhost:7777")
        assert client.options("/i/events", headers=request).status_code == 204


def test_sdk_paths_carry_no_console_headers(visitor: Visitor) -> None:
    response = visitor.config()
    assert "content-security-policy" not in response.headers
    assert "x-frame-options" not in response.headers


def test_other_methods_are_405(ingest_server: LiveServer) -> None:
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url) as client:
        assert client.get("/i/events").status_code == 405
        assert client.delete("/i/config").status_code == 405
        assert client.get("/i/events").json()["error"]["code"] == "method_not_allowed"
