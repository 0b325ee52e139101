"""The sites API: create, list, change, duplicates, owner scoping, and retrying the connection check."""

from __future__ import annotations

import uuid

import httpx
import pytest

from sightline.autocapture.settings import DEFAULT_EXTENSIONS
from tests.conftest import StartServer
from tests.support.pages import customer_site
from tests.support.server import LiveServer, create_owner


def _unique_domain() -> str:
    return f"s{uuid.uuid4().hex[:12]}.example.com"


def _create(owner: httpx.Client, domain: str | None = None, name: str = "Shop") -> dict[str, object]:
    response = owner.post("/api/sites", json={"name": name, "domain": domain or _unique_domain()})
    assert response.status_code == 201, response.text
    site: dict[str, object] = response.json()
    return site


def test_a_new_site_has_a_key_a_snippet_and_defaults(owner: httpx.Client, console_server: LiveServer) -> None:
    site = _create(owner)
    assert set(site) == {
        "id",
        "name",
        "domain",
        "key",
        "snippet",
        "collection_enabled",
        "recording_enabled",
        "recording_sample_rate",
        "timezone",
        "week_start",
        "cookieless",
        "excluded_addresses",
        "retention_days",
        "blocked_referrers",
        "autocapture",
        "created_at",
        "connection",
    }
    assert site["snippet"] == (
        f'<script defer src="{console_server.base_url}/analytics.js" data-site="{site["key"]}"></script>'
    )
    assert site["collection_enabled"] is True
    assert site["recording_enabled"] is False
    assert site["recording_sample_rate"] == 1.0
    assert site["connection"] == {
        "state": "pending",
        "first_event_at": None,
        "last_event_at": None,
        "last_check_at": None,
        "last_check_error": None,
    }


def test_a_new_site_captures_nothing_by_itself_and_the_owner_can_turn_each_capture_on(
    owner: httpx.Client,
) -> None:
    site = _create(owner)
    capture = site["autocapture"]
    assert isinstance(capture, dict)
    assert {k: v for k, v in capture.items() if k != "file_download_extensions"} == dict.fromkeys(
        ("outbound_links", "file_downloads", "engagement", "web_vitals", "heatmaps"), False
    )
    assert capture["file_download_extensions"] == list(DEFAULT_EXTENSIONS)
    changed = owner.patch(
        f"/api/sites/{site['id']}",
        json={
            "autocapture": {"heatmaps": True, "web_vitals": True, "file_download_extensions": [".PDF", "zip"]}
        },
    )
    assert changed.status_code == 200, changed.text
    after = changed.json()["autocapture"]
    assert (after["heatmaps"], after["web_vitals"], after["engagement"]) == (True, True, False)
    assert after["file_download_extensions"] == ["pdf", "zip"]
    # A partial change keeps the rest; null restores the default extensions.
    again = owner.patch(
        f"/api/sites/{site['id']}",
        json={"autocapture": {"heatmaps": False, "file_download_extensions": None}},
    ).json()["autocapture"]
    assert (again["heatmaps"], again["web_vitals"]) == (False, True)
    assert again["file_download_extensions"] == list(DEFAULT_EXTENSIONS)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"heatmaps": "yes"}, "autocapture.heatmaps"),
        ({"heatmaps": None}, "autocapture.heatmaps"),
        ({"unknown": True}, "autocapture.unknown"),
        ({"file_download_extensions": []}, "autocapture.file_download_extensions"),
        ({"file_download_extensions": ["p d f"]}, "autocapture.file_download_extensions"),
        ({"file_download_extensions": "pdf"}, "autocapture.file_download_extensions"),
    ],
)
def test_an_invalid_autocapture_change_gets_422_naming_the_field(
    owner: httpx.Client, body: dict[str, object], field: str
) -> None:
    site = _create(owner)
    response = owner.patch(f"/api/sites/{site['id']}", json={"autocapture": body})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    [stored] = [s for s in owner.get("/api/sites").json()["sites"] if s["id"] == site["id"]]
    assert stored["autocapture"] == site["autocapture"]


def test_a_created_site_is_listed(owner: httpx.Client) -> None:
    site = _create(owner)
    listed = owner.get("/api/sites")
    assert listed.status_code == 200
    assert site in listed.json()["sites"]


def test_a_duplicate_domain_gets_409_even_written_differently(owner: httpx.Client) -> None:
    domain = _unique_domain()
    _create(owner, domain)
    again = owner.post("/api/sites", json={"name": "Again", "domain": domain.upper() + "."})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "site_exists"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Shop", "domain": "https://example.com/"}, "domain"),
        ({"name": "Shop", "domain": "not a domain"}, "domain"),
        ({"name": "Shop", "domain": ""}, "domain"),
        ({"name": "", "domain": "example.com"}, "name"),
        ({"name": "x" * 101, "domain": "example.com"}, "name"),
        ({"name": "Shop"}, "domain"),
        ({"name": 7, "domain": "example.com"}, "name"),
        ({"name": "Shop", "domain": "example.com", "owner_id": 2}, "owner_id"),
    ],
)
def test_an_invalid_site_gets_422_naming_the_field(
    owner: httpx.Client, body: dict[str, object], field: str
) -> None:
    response = owner.post("/api/sites", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field
    assert response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"name": "x\\ud800", "domain": "example.com"}', "name"),
        (b'{"name": "Shop", "domain": "\\udfffexample.com"}', "domain"),
    ],
)
def test_a_lone_surrogate_escape_gets_422_not_a_server_error(
    owner: httpx.Client, raw: bytes, field: str
) -> None:
    response = owner.post("/api/sites", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field


def test_a_site_can_be_renamed_and_switched(owner: httpx.Client) -> None:
    site = _create(owner)
    changed = owner.patch(
        f"/api/sites/{site['id']}",
        json={"name": "Renamed", "recording_enabled": True, "recording_sample_rate": 0.25},
    )
    assert changed.status_code == 200
    assert changed.json()["name"] == "Renamed"
    assert changed.json()["recording_enabled"] is True
    assert changed.json()["recording_sample_rate"] == 0.25
    off = owner.patch(f"/api/sites/{site['id']}", json={"collection_enabled": False}).json()
    assert off["connection"]["state"] == "disabled"
    on = owner.patch(f"/api/sites/{site['id']}", json={"collection_enabled": True}).json()
    assert on["connection"]["state"] == "pending"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"recording_sample_rate": 1.5}, "recording_sample_rate"),
        ({"recording_sample_rate": -0.1}, "recording_sample_rate"),
        ({"recording_sample_rate": "0.5"}, "recording_sample_rate"),
        ({"collection_enabled": "yes"}, "collection_enabled"),
        ({"collection_enabled": None}, "collection_enabled"),
        ({"name": ""}, "name"),
        ({"domain": "other.example.com"}, "domain"),
        ({"key": "mine"}, "key"),
    ],
)
def test_an_invalid_change_gets_422_naming_the_field(
    owner: httpx.Client, body: dict[str, object], field: str
) -> None:
    site = _create(owner)
    response = owner.patch(f"/api/sites/{site['id']}", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field


def test_an_unknown_site_id_gets_404(owner: httpx.Client) -> None:
    for path in ("/api/sites/999999", "/api/sites/abc", "/api/sites/0", "/api/sites/" + "9" * 30):
        response = owner.patch(path, json={"name": "x"})
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "not_found"
    assert (
        owner.post("/api/sites/999999/retry", headers={"Content-Type": "application/json"}).status_code == 404
    )


def test_another_owners_site_is_invisible(start_server: StartServer) -> None:
    server = start_server()
    create_owner(server, "a@example.com", "password-of-a-1")
    create_owner(server, "b@example.com", "password-of-b-1")
    with server.client() as a, server.client() as b:
        a.post("/api/login", json={"email": "a@example.com", "password": "password-of-a-1"})
        b.post("/api/login", json={"email": "b@example.com", "password": "password-of-b-1"})
        site = a.post("/api/sites", json={"name": "A", "domain": "a.example.com"}).json()
        assert b.get("/api/sites").json() == {"sites": []}
        assert b.patch(f"/api/sites/{site['id']}", json={"name": "mine"}).status_code == 404
        assert (
            b.post(f"/api/sites/{site['id']}/retry", headers={"Content-Type": "application/json"}).status_code
            == 404
        )
        # Each owner may connect the same domain independently.
        assert b.post("/api/sites", json={"name": "B", "domain": "a.example.com"}).status_code == 201


def _retry(owner: httpx.Client, site_id: object) -> httpx.Response:
    return owner.post(f"/api/sites/{site_id}/retry", headers={"Content-Type": "application/json"})


def test_retry_finds_the_snippet_and_marks_the_site_connected(owner: httpx.Client) -> None:
    with customer_site() as customer:
        site = _create(owner, customer.domain)
        customer.home(f"<!doctype html><head>{site['snippet']}</head><body>Shop</body>")
        response = _retry(owner, site["id"])
    assert response.status_code == 200
    connection = response.json()["connection"]
    assert connection["state"] == "connected"
    assert connection["last_check_error"] is None
    assert connection["last_check_at"] is not None
    assert customer.requests[0][1]["Host"] == customer.domain


def test_retry_without_the_snippet_reports_snippet_not_found(owner: httpx.Client) -> None:
    with customer_site() as customer:
        site = _create(owner, customer.domain)
        connection = _retry(owner, site["id"]).json()["connection"]
    assert connection["state"] == "error"
    assert connection["last_check_error"] == "snippet_not_found"


def test_retry_with_another_sites_key_reports_key_mismatch(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    with customer_site() as customer:
        site = _create(owner, customer.domain)
        other = (
            f'<script defer src="{console_server.base_url}/analytics.js" data-site="someone-else"></script>'
        )
        customer.home(f"<html><head>{other}</head></html>")
        connection = _retry(owner, site["id"]).json()["connection"]
    assert connection["last_check_error"] == "key_mismatch"


def test_retry_of_an_unreachable_site_reports_unreachable(owner: httpx.Client) -> None:
    with customer_site() as customer:
        domain = customer.domain
    site = _create(owner, domain)  # the server is gone: nothing listens there now
    connection = _retry(owner, site["id"]).json()["connection"]
    assert connection["last_check_error"] == "unreachable"


def test_retry_follows_a_redirect_on_the_same_host_but_not_to_another(owner: httpx.Client) -> None:
    with customer_site() as customer:
        site = _create(owner, customer.domain)
        customer.home("", status=302, headers={"Location": "/home"})
        from tests.support.pages import Page

        customer.pages["/home"] = Page(body=f"<html>{site['snippet']}</html>".encode())
        assert _retry(owner, site["id"]).json()["connection"]["state"] == "connected"

        other = _create(owner, f"localhost:{customer.port}")
        customer.home("", status=302, headers={"Location": f"http://127.0.0.1:{customer.port}/home"})
        connection = _retry(owner, other["id"]).json()["connection"]
    assert connection["last_check_error"] == "unreachable"


def test_retry_of_the_same_site_right_away_gets_429_with_retry_after(owner: httpx.Client) -> None:
    with customer_site() as customer:
        site = _create(owner, customer.domain)
        assert _retry(owner, site["id"]).status_code == 200
        again = _retry(owner, site["id"])
    assert again.status_code == 429
    assert int(again.headers["Retry-After"]) >= 1


def test_retry_refuses_a_private_address_by_default(start_server: StartServer) -> None:
    server = start_server()
    create_owner(server, "owner@example.com", "a long enough password")
    with customer_site() as customer, server.client() as client:
        client.post("/api/login", json={"email": "owner@example.com", "password": "a long enough password"})
        site = client.post("/api/sites", json={"name": "Local", "domain": customer.domain}).json()
        customer.home(f"<html>{site['snippet']}</html>")
        connection = _retry(client, site["id"]).json()["connection"]
        assert connection["state"] == "error"
        assert connection["last_check_error"] == "blocked_address"
        assert customer.requests == []  # not even one request reached the private address
        listed = client.get("/api/sites").json()["sites"][0]
        assert listed["connection"]["last_check_error"] == "blocked_address"


def test_retry_gives_up_on_a_slow_site_with_timeout(start_server: StartServer) -> None:
    server = start_server(
        env={"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true", "SIGHTLINE_CHECK_TIMEOUT_SECONDS": "1"}
    )
    create_owner(server, "owner@example.com", "a long enough password")
    with customer_site() as customer, server.client() as client:
        client.post("/api/login", json={"email": "owner@example.com", "password": "a long enough password"})
        site = client.post("/api/sites", json={"name": "Slow", "domain": customer.domain}).json()
        customer.home(f"<html>{site['snippet']}</html>", delay=3)
        connection = _retry(client, site["id"]).json()["connection"]
    assert connection["last_check_error"] == "timeout"
