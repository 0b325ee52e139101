"""``POST /api/events`` from a real HTTP client: a backend's batch with an ``events:write`` key is
stored durably with the place and device of the client it names (never storing its address),
shows in the reports, is stored once however often it is sent, and meets ingest's limits, drops
and error answers, in the console's order of checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from sightline.database import Database
from tests.ingest.helpers import CHROME, IPHONE, Site, batch_id, dropped, event, stored
from tests.reports.helpers import wait_caught_up
from tests.support.geo import LONDON, SYDNEY
from tests.support.http import TLS
from tests.support.server import LiveServer


def _key(owner: httpx.Client, site_id: int | None, scopes: list[str] | None = None) -> str:
    body: dict[str, Any] = {"name": "backend"}
    if site_id is not None:
        body["site_id"] = site_id
    if scopes is not None:
        body["scopes"] = scopes
    made = owner.post("/api/keys", json=body)
    assert made.status_code == 201, made.text
    key: str = made.json()["key"]
    return key


@pytest.fixture
def backend(ingest_server: LiveServer) -> Iterator[httpx.Client]:
    """A server-side client: no Origin, no browser."""
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url, timeout=30) as client:
        yield client


@pytest.fixture
def key(ingest_owner: httpx.Client, site: Site) -> str:
    return _key(ingest_owner, site.id, ["events:write"])


def _post(client: httpx.Client, key: str | None, body: object, **headers: str) -> httpx.Response:
    sent = {"Content-Type": "application/json"} | headers
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return client.post("/api/events", content=content, headers=sent)


def _signup(name: str = "signup", **fields: Any) -> dict[str, Any]:
    return event(name, visitor_id="user-42", session_id="visit-42", path="/checkout", **fields)


def test_a_backends_batch_is_stored_with_the_named_clients_place_and_device_and_shows_in_reports(
    backend: httpx.Client, key: str, site: Site, ingest_db: Database, ingest_owner: httpx.Client
) -> None:
    body = {
        "batch_id": batch_id(),
        "events": [_signup(props={"plan": "pro"}), event("pageview", path="/welcome")],
        "client": {"address": LONDON, "user_agent": IPHONE},
    }
    response = _post(backend, key, body)
    assert response.status_code == 202, response.text
    assert response.json() == {"accepted": 2}
    rows = stored(ingest_db, site)
    assert [(r.name, r.path, r.country, r.device_type, r.os) for r in rows] == [
        ("signup", "/checkout", "GB", "mobile", "iOS"),
        ("pageview", "/welcome", "GB", "mobile", "iOS"),
    ]
    assert orjson.loads(rows[0].props) == {"plan": "pro"}
    assert all(LONDON not in str(value) for row in rows for value in row)
    wait_caught_up(ingest_owner)
    summary = ingest_owner.get(f"/api/sites/{site.id}/reports/summary", params={"range": "today"})
    assert summary.json()["current"]["pageviews"] == 1
    countries = ingest_owner.get(
        f"/api/sites/{site.id}/reports/breakdown", params={"range": "today", "dimension": "countries"}
    )
    assert [row["value"] for row in countries.json()["rows"]] == ["GB"]
    events = ingest_owner.get(
        f"/api/sites/{site.id}/reports/breakdown", params={"range": "today", "dimension": "events"}
    )
    assert "signup" in [row["value"] for row in events.json()["rows"]]


def test_a_batch_sent_again_is_answered_the_same_and_stored_once(
    backend: httpx.Client, key: str, site: Site, ingest_db: Database, ingest_owner: httpx.Client
) -> None:
    body = {"batch_id": batch_id(), "events": [_signup(), _signup(name="renewal")]}
    before = ingest_owner.get("/api/health").json()["services"]["ingest"]["duplicate_batches"]
    answers = [_post(backend, key, body) for _ in range(3)]
    assert [(a.status_code, a.json()) for a in answers] == [(202, {"accepted": 2})] * 3
    assert [r.name for r in stored(ingest_db, site)] == ["signup", "renewal"]
    after = ingest_owner.get("/api/health").json()["services"]["ingest"]["duplicate_batches"]
    assert after == before + 2


def test_without_a_client_the_event_is_a_backends_own_and_no_bot(
    backend: httpx.Client, key: str, site: Site, ingest_db: Database
) -> None:
    response = _post(
        backend, key, {"batch_id": batch_id(), "events": [_signup()]}, **{"User-Agent": "curl/8"}
    )
    assert response.status_code == 202
    rows = stored(ingest_db, site)
    assert [(r.name, r.browser, r.device_type, r.country) for r in rows] == [("signup", None, None, None)]


def test_an_origin_is_neither_needed_nor_checked_with_a_key(
    backend: httpx.Client, key: str, site: Site, ingest_db: Database
) -> None:
    for origin in ("http://evil.example", "null"):
        sent = _post(backend, key, {"batch_id": batch_id(), "events": [_signup()]}, Origin=origin)
        assert sent.status_code == 202, sent.text
    assert len(stored(ingest_db, site)) == 2


@pytest.mark.parametrize(
    ("client", "reason"),
    [
        ({"user_agent": "Googlebot/2.1 (+http://www.google.com/bot.html)"}, "bot"),
        ({"address": SYDNEY, "user_agent": CHROME}, "excluded_address"),
    ],
)
def test_bots_and_excluded_addresses_are_judged_by_the_named_client_and_not_stored(
    backend: httpx.Client,
    key: str,
    site: Site,
    ingest_db: Database,
    ingest_owner: httpx.Client,
    client: dict[str, str],
    reason: str,
) -> None:
    site.change(excluded_addresses=[SYDNEY])
    before = dropped(ingest_owner)[reason]
    response = _post(backend, key, {"batch_id": batch_id(), "events": [_signup()], "client": client})
    assert (response.status_code, response.json()) == (202, {"accepted": 1})
    assert stored(ingest_db, site) == []
    assert dropped(ingest_owner)[reason] == before + 1


def test_a_spam_referrer_is_dropped_as_from_the_sdk(
    backend: httpx.Client, key: str, site: Site, ingest_db: Database
) -> None:
    response = _post(backend, key, {"batch_id": batch_id(), "events": [_signup(referrer="https://0-0.fr/")]})
    assert response.status_code == 202
    assert stored(ingest_db, site) == []


def test_without_a_key_or_with_an_unknown_one_the_answer_is_401(backend: httpx.Client) -> None:
    body = {"batch_id": batch_id(), "events": [_signup()]}
    missing = _post(backend, None, body)
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "not_signed_in"
    made_up = _post(backend, "sl_" + "x" * 43, body)
    assert made_up.status_code == 401
    assert made_up.json()["error"]["code"] == "invalid_api_key"


def test_a_key_without_the_scope_is_403_forbidden_and_one_without_a_site_is_never_made(
    backend: httpx.Client, ingest_owner: httpx.Client, site: Site, ingest_db: Database
) -> None:
    body = {"batch_id": batch_id(), "events": [_signup()]}
    reader = _key(ingest_owner, site.id)  # stats:read only
    refused = _post(backend, reader, body)
    assert refused.status_code == 403
    assert refused.json()["error"] == {
        "code": "forbidden",
        "message": "This API key does not have the events:write scope; create a key that has it.",
    }
    every_site = ingest_owner.post(
        "/api/keys", json={"name": "every site", "scopes": ["events:write", "stats:read"]}
    )
    assert every_site.status_code == 422  # such a key is never made: it would name no site
    assert every_site.json()["error"]["field"] == "site_id"
    assert stored(ingest_db, site) == []


def test_the_checks_come_in_the_consoles_order_401_415_413_then_403(
    backend: httpx.Client, ingest_owner: httpx.Client, site: Site, key: str
) -> None:
    big = b'{"x": "' + b"a" * (64 * 1024) + b'"}'
    reader = _key(ingest_owner, site.id)
    text = {"Content-Type": "text/plain"}
    assert _post(backend, None, big, **text).status_code == 401
    assert _post(backend, reader, big, **text).status_code == 415
    assert _post(backend, reader, big).status_code == 413

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 4096):
            yield big[start : start + 4096]

    chunked = backend.post(
        "/api/events",
        content=chunks(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert chunked.status_code == 413
    assert chunked.json()["error"]["code"] == "body_too_large"
    assert _post(backend, reader, {"batch_id": batch_id(), "events": [_signup()]}).status_code == 403
    assert backend.get("/api/events", headers={"Authorization": f"Bearer {key}"}).status_code == 405


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        (b"{nope", 400, "malformed_json", None),
        (b"[1]", 422, "invalid_body", None),
        ({"events": [event()]}, 422, "invalid_field", "batch_id"),
        ({"batch_id": "short", "events": [event()]}, 422, "invalid_field", "batch_id"),
        ({"batch_id": "B" * 20, "events": [event(name="")]}, 422, "invalid_field", "events.0.name"),
        ({"batch_id": "B" * 20, "events": [event()] * 21}, 422, "invalid_field", "events"),
        (
            {"batch_id": "B" * 20, "events": [event()], "client": {"address": "nowhere"}},
            422,
            "invalid_field",
            "client.address",
        ),
        (
            {"batch_id": "B" * 20, "events": [event()], "client": {"user_agent": 7}},
            422,
            "invalid_field",
            "client.user_agent",
        ),
        ({"batch_id": "B" * 20, "events": [event()], "client": "x"}, 422, "invalid_field", "client"),
    ],
)
def test_bad_input_gets_the_error_shape_naming_the_field_and_stores_nothing(
    backend: httpx.Client,
    key: str,
    site: Site,
    ingest_db: Database,
    body: object,
    status: int,
    code: str,
    field: str | None,
) -> None:
    response = _post(backend, key, body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error.get("field") == field
    assert error["message"]
    assert stored(ingest_db, site) == []


def test_a_switched_off_site_refuses_as_ingest_does(
    backend: httpx.Client, key: str, site: Site, ingest_db: Database
) -> None:
    site.change(collection_enabled=False)
    response = _post(backend, key, {"batch_id": batch_id(), "events": [_signup()]})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "collection_disabled"
    assert stored(ingest_db, site) == []
