"""Every drop reason of the pipeline, the limits at and over their edge, and nothing stored of a bad batch."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from sightline.database import Database
from tests.ingest.helpers import CHROME, Site, Visitor, batch, dropped, event, stored
from tests.support.http import TLS
from tests.support.server import LiveServer

LIMIT = 64 * 1024


def padded_to(site: Site, size: int) -> bytes:
    """A valid one-event batch whose JSON text is exactly ``size`` bytes."""
    body = batch(site, event(props={"pad": ""}))
    base = len(orjson.dumps(body))
    body["events"][0]["props"]["pad"] = "x" * min(2000, size - base)
    rest = size - len(orjson.dumps(body))
    text = orjson.dumps(body)
    return text[:-1] + b" " * rest + b"}"


def refused(response: httpx.Response, status: int, code: str, field: str | None = None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"]
    if field is not None:
        assert error["field"] == field


def test_a_body_of_exactly_64_kib_is_accepted(visitor: Visitor) -> None:
    body = padded_to(visitor.site, LIMIT)
    assert len(body) == LIMIT
    assert visitor.send(body).status_code == 202


def test_a_body_over_64_kib_is_refused_with_413_and_counted(
    visitor: Visitor, ingest_owner: httpx.Client
) -> None:
    before = dropped(ingest_owner)["body_too_large"]
    refused(visitor.send(padded_to(visitor.site, LIMIT + 1)), 413, "body_too_large")
    assert dropped(ingest_owner)["body_too_large"] == before + 1


def test_a_streamed_body_over_64_kib_without_a_length_is_refused(visitor: Visitor) -> None:
    def chunks() -> Any:
        body = padded_to(visitor.site, LIMIT + 100)
        for start in range(0, len(body), 4096):
            yield body[start : start + 4096]

    response = visitor.client.post("/i/events", content=chunks(), headers={"Content-Type": "text/plain"})
    refused(response, 413, "body_too_large")


@pytest.mark.parametrize("body", [b"", b"{", b'{"key": "k",}', b"\xff\xfe", b'"\\ud800"', b"NaN"])
def test_text_that_is_not_json_is_refused_with_400(
    visitor: Visitor, body: bytes, ingest_db: Database
) -> None:
    refused(visitor.send(body), 400, "malformed_json")
    assert stored(ingest_db, visitor.site) == []


def test_malformed_json_is_counted(visitor: Visitor, ingest_owner: httpx.Client) -> None:
    before = dropped(ingest_owner)["malformed_json"]
    visitor.send(b"{nope")
    assert dropped(ingest_owner)["malformed_json"] == before + 1


def test_twenty_events_are_accepted_and_twenty_one_refused(visitor: Visitor, ingest_db: Database) -> None:
    assert visitor.send(batch(visitor.site, *[event(f"e{i}") for i in range(20)])).status_code == 202
    refused(
        visitor.send(batch(visitor.site, *[event(f"f{i}") for i in range(21)])),
        422,
        "invalid_field",
        "events",
    )
    assert len(stored(ingest_db, visitor.site)) == 20


def test_a_name_of_100_characters_is_accepted_and_101_refused_naming_the_event(
    visitor: Visitor, ingest_db: Database
) -> None:
    assert visitor.send(batch(visitor.site, event("n" * 100))).status_code == 202
    response = visitor.send(batch(visitor.site, event("ok"), event("ok"), event("ok"), event("n" * 101)))
    refused(response, 422, "invalid_field", "events.3.name")
    assert [row.name for row in stored(ingest_db, visitor.site)] == ["n" * 100]  # nothing of the bad batch


def test_thirty_props_are_accepted_and_thirty_one_refused(visitor: Visitor) -> None:
    thirty = {f"k{i}": i for i in range(30)}
    assert visitor.send(batch(visitor.site, event(props=thirty))).status_code == 202
    refused(
        visitor.send(batch(visitor.site, event(props={**thirty, "k30": 1}))),
        422,
        "invalid_field",
        "events.0.props",
    )


def test_a_prop_string_of_2000_characters_is_accepted_and_2001_refused(visitor: Visitor) -> None:
    assert visitor.send(batch(visitor.site, event(props={"s": "é" * 2000}))).status_code == 202
    response = visitor.send(batch(visitor.site, event(props={"s": "é" * 2001})))
    refused(response, 422, "invalid_field", "events.0.props")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"props": {"a": None}}, "events.0.props"),
        ({"props": {"a": [1, 2]}}, "events.0.props"),
        ({"props": {"a": {"nested": 1}}}, "events.0.props"),
        ({"props": [1]}, "events.0.props"),
        ({"props": None}, "events.0.props"),
        ({"props": {"a": 1e400}}, "events.0.props"),
        ({"name": ""}, "events.0.name"),
        ({"name": 5}, "events.0.name"),
        ({"visitor_id": ""}, "events.0.visitor_id"),
        ({"visitor_id": "v" * 201}, "events.0.visitor_id"),
        ({"session_id": "s" * 65}, "events.0.session_id"),
        ({"path": "pricing"}, "events.0.path"),
        ({"path": "/" + "p" * 2000}, "events.0.path"),
        ({"url": "u" * 2001}, "events.0.url"),
        ({"referrer": "r" * 2001}, "events.0.referrer"),
        ({"title": "t" * 501}, "events.0.title"),
        ({"utm": {"source": "s" * 201}}, "events.0.utm.source"),
        ({"screen": -1}, "events.0.screen"),
        ({"ts": "yesterday"}, "events.0.ts"),
        ({"name": "a\u0000b"}, "events.0.name"),
        ({"props": {"k": "nul \u0000 inside"}}, "events.0.props"),
    ],
)
def test_an_invalid_event_field_is_refused_with_422_naming_it(
    visitor: Visitor, ingest_db: Database, change: dict[str, Any], field: str
) -> None:
    response = visitor.send(batch(visitor.site, event(**change)))
    refused(response, 422, "invalid_field", field)
    assert stored(ingest_db, visitor.site) == []


def test_a_missing_event_field_is_named(visitor: Visitor) -> None:
    sent = event()
    del sent["session_id"]
    refused(visitor.send(batch(visitor.site, sent)), 422, "invalid_field", "events.0.session_id")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"batch_id": "short"}, "batch_id"),
        ({"batch_id": "has spaces in it, sorry"}, "batch_id"),
        ({"batch_id": "b" * 65}, "batch_id"),
        ({"events": []}, "events"),
        ({"key": ""}, "key"),
    ],
)
def test_an_invalid_batch_field_is_refused_with_422_naming_it(
    visitor: Visitor, body: dict[str, Any], field: str
) -> None:
    refused(visitor.send({**batch(visitor.site), **body}), 422, "invalid_field", field)


def test_a_body_that_is_not_an_object_is_refused_with_422(
    visitor: Visitor, ingest_owner: httpx.Client
) -> None:
    before = dropped(ingest_owner)["invalid"]
    refused(visitor.send(b"[1, 2]"), 422, "invalid_body")
    assert dropped(ingest_owner)["invalid"] == before + 1


def test_an_unknown_key_is_refused_with_404(visitor: Visitor, ingest_owner: httpx.Client) -> None:
    before = dropped(ingest_owner)["unknown_site"]
    body = {**batch(visitor.site), "key": "no-such-key-here"}
    response = visitor.send(body)
    refused(response, 404, "unknown_site")
    # The origin belongs to a site, so the SDK may read the answer and stop retrying.
    assert response.headers["access-control-allow-origin"] == visitor.site.origin
    assert dropped(ingest_owner)["unknown_site"] == before + 1


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "http://localhost:1", "http://sub.{host}", "null", ""],
)
def test_a_batch_from_another_origin_is_refused_with_403_and_no_cors(
    ingest_server: LiveServer, site: Site, ingest_db: Database, origin: str
) -> None:
    host = site.domain.split(":")[0]
    headers = {"User-Agent": CHROME, "Content-Type": "text/plain"}
    if origin:
        headers["Origin"] = origin.format(host=host)
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url) as client:
        response = client.post("/i/events", content=orjson.dumps(batch(site)), headers=headers)
    refused(response, 403, "origin_not_allowed")
    assert "access-control-allow-origin" not in response.headers
    assert stored(ingest_db, site) == []


def test_the_www_host_of_a_site_and_its_referer_fallback_are_its_origin(
    ingest_server: LiveServer, ingest_owner: httpx.Client, ingest_db: Database
) -> None:
    site = Site.create(ingest_owner, "shop.localhost:8443")
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url, headers={"User-Agent": CHROME}) as client:
        www = client.post(
            "/i/events",
            content=orjson.dumps(batch(site)),
            headers={"Origin": "http://www.shop.localhost:8443"},
        )
        assert www.status_code == 202, www.text
        assert www.headers["access-control-allow-origin"] == "http://www.shop.localhost:8443"
        no_origin = client.post(
            "/i/events",
            content=orjson.dumps(batch(site)),
            headers={"Referer": "https://shop.localhost:8443/cart?x=1"},
        )
        assert no_origin.status_code == 202, no_origin.text
        wrong_port = client.post(
            "/i/events", content=orjson.dumps(batch(site)), headers={"Origin": "http://shop.localhost"}
        )
        refused(wrong_port, 403, "origin_not_allowed")
    assert len(stored(ingest_db, site)) == 2


def test_a_site_without_a_port_takes_only_default_ports(
    ingest_server: LiveServer, ingest_owner: httpx.Client
) -> None:
    site = Site.create(ingest_owner, "blog.example.com")
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url, headers={"User-Agent": CHROME}) as client:
        for origin, status in [
            ("https://blog.example.com", 202),
            ("http://www.blog.example.com", 202),
            ("https://blog.example.com:8443", 403),
            ("https://example.com", 403),
        ]:
            response = client.post("/i/events", content=orjson.dumps(batch(site)), headers={"Origin": origin})
            assert response.status_code == status, (origin, response.text)


def test_a_disabled_site_refuses_events_at_once_and_its_config_says_disabled(
    visitor: Visitor, ingest_db: Database, ingest_owner: httpx.Client
) -> None:
    assert visitor.send(batch(visitor.site)).status_code == 202  # cached as enabled
    visitor.site.change(collection_enabled=False)
    before = dropped(ingest_owner)["collection_disabled"]
    response = visitor.send(batch(visitor.site, event("after")))
    refused(response, 403, "collection_disabled")
    assert response.headers["access-control-allow-origin"] == visitor.site.origin  # the SDK can read it
    assert dropped(ingest_owner)["collection_disabled"] == before + 1
    config = visitor.config()
    assert config.status_code == 200
    body = config.json()
    assert {k: body[k] for k in ("events", "recording", "feedback", "cookieless", "capture")} == {
        "events": "disabled",
        "recording": {"enabled": False, "sample_rate": 1.0},
        "feedback": False,
        "cookieless": False,
        "capture": [],
    }
    assert [row.name for row in stored(ingest_db, visitor.site)] == ["pageview"]
    visitor.site.change(collection_enabled=True)
    assert visitor.send(batch(visitor.site, event("again"))).status_code == 202


@pytest.mark.parametrize(
    "user_agent",
    [
        "python-httpx/0.27.0",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 "
        "Safari/537.36",
        "curl/8.5.0",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 "
        "Safari/537.36 Chrome-Lighthouse",
        "",
    ],
)
def test_a_bot_is_answered_like_a_browser_but_nothing_is_stored(
    ingest_server: LiveServer, site: Site, ingest_db: Database, ingest_owner: httpx.Client, user_agent: str
) -> None:
    before = dropped(ingest_owner)["bot"]
    body = batch(site, event(), event())
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url, headers={"Origin": site.origin}) as client:
        response = client.post("/i/events", content=orjson.dumps(body), headers={"User-Agent": user_agent})
    assert response.status_code == 202
    assert response.json() == {"accepted": 2, "batch_id": body["batch_id"]}
    assert stored(ingest_db, site) == []
    assert dropped(ingest_owner)["bot"] == before + 1
    assert site.record()["connection"]["state"] == "pending"
