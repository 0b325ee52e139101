"""API keys: shown once, stored as a hash, made for a site or not, with scopes, revocable, rate-limited."""

from __future__ import annotations

import hashlib
import sqlite3
import uuid

import httpx

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.support.server import LiveServer, create_owner
from tests.support.team import client, close_member_clients, new_member

__all__ = ["close_member_clients"]


def _site(owner: httpx.Client) -> int:
    response = owner.post(
        "/api/sites", json={"name": "Shop", "domain": f"k{uuid.uuid4().hex[:10]}.example.com"}
    )
    assert response.status_code == 201
    return int(response.json()["id"])


def _bearer(server: LiveServer, key: str) -> httpx.Client:
    made = client(server)
    made.headers["Authorization"] = f"Bearer {key}"
    del made.headers["Origin"]
    return made


def test_a_key_is_shown_once_and_only_its_hash_is_stored(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    created = owner.post("/api/keys", json={"name": "Dashboard script"})
    assert created.status_code == 201
    body = created.json()
    assert set(body) >= {"id", "name", "key", "created_at"}
    listed = owner.get("/api/keys").json()["keys"]
    mine = next(k for k in listed if k["id"] == body["id"])
    assert "key" not in mine
    assert mine["last_used_at"] is None
    assert body["key"].startswith(mine["prefix"])
    if console_server.database_url is None:
        stored = (
            sqlite3.connect(console_server.data_dir / "sightline.db")
            .execute("SELECT key_hash FROM api_keys WHERE id = ?", (body["id"],))
            .fetchone()[0]
        )
        assert stored == hashlib.sha256(body["key"].encode()).digest()
        assert body["key"].encode() not in (console_server.data_dir / "sightline.db").read_bytes()


def test_a_key_reads_reports_and_records_when_it_was_last_used(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site_id = _site(owner)
    key = owner.post("/api/keys", json={"name": "all sites"}).json()
    assert key["scopes"] == ["stats:read"]  # the default
    reader = _bearer(console_server, key["key"])
    summary = reader.get(f"/api/sites/{site_id}/reports/summary?range=30d")
    assert summary.status_code == 200
    assert summary.json()["current"]["visitors"] == 0
    assert reader.get(f"/api/sites/{site_id}/reports/breakdown?dimension=pages").status_code == 200
    for refused in (reader.get("/api/sites"), reader.get(f"/api/sites/{site_id}/goals")):
        assert refused.status_code == 403  # sites:read
        assert refused.json()["error"]["code"] == "forbidden"
    assert reader.post(f"/api/sites/{site_id}/retry", json={}).status_code == 403  # sites:write
    assert reader.get("/api/me").status_code == 401  # no scope opens it to keys
    listed = next(k for k in owner.get("/api/keys").json()["keys"] if k["id"] == key["id"])
    assert listed["last_used_at"] is not None


def test_a_key_scoped_to_one_site_reads_only_that_site(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    mine, other = _site(owner), _site(owner)
    key = owner.post(
        "/api/keys", json={"name": "one site", "site_id": mine, "scopes": ["sites:read", "stats:read"]}
    ).json()
    assert key["site_id"] == mine
    assert key["scopes"] == ["stats:read", "sites:read"]
    reader = _bearer(console_server, key["key"])
    assert reader.get(f"/api/sites/{mine}/reports/summary").status_code == 200
    assert [site["id"] for site in reader.get("/api/sites").json()["sites"]] == [mine]
    refused = reader.get(f"/api/sites/{other}/reports/summary")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    assert reader.get(f"/api/sites/{mine}").json()["id"] == mine
    assert reader.get(f"/api/sites/{other}").status_code == 403


def test_a_revoked_or_made_up_key_is_401(owner: httpx.Client, console_server: LiveServer) -> None:
    site_id = _site(owner)
    key = owner.post("/api/keys", json={"name": "short lived"}).json()
    reader = _bearer(console_server, key["key"])
    assert reader.get(f"/api/sites/{site_id}/reports/summary").status_code == 200
    assert owner.delete(f"/api/keys/{key['id']}").status_code == 204
    revoked = reader.get(f"/api/sites/{site_id}/reports/summary")
    assert revoked.status_code == 401
    assert revoked.json()["error"]["code"] == "invalid_api_key"
    assert (
        _bearer(console_server, "sl_" + "x" * 43).get(f"/api/sites/{site_id}/reports/summary").status_code
        == 401
    )
    assert owner.delete(f"/api/keys/{key['id']}").status_code == 404


def test_bad_key_requests_name_the_field_and_viewers_cannot_make_keys(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    assert owner.post("/api/keys", json={"name": ""}).json()["error"]["field"] == "name"
    for site_id in (987654, 0, -1, 2**63, 2**64, 10**30):  # past the database's integers too: no 500
        refused = owner.post("/api/keys", json={"name": "x", "site_id": site_id})
        assert refused.status_code == 422, site_id
        assert refused.json()["error"]["field"] == "site_id"
    viewer = new_member(console_server, owner, "viewer")
    assert viewer.post("/api/keys", json={"name": "mine"}).status_code == 403


def test_a_key_over_its_rate_limit_is_told_when_to_retry(start_server: StartServer) -> None:
    server = start_server(env={"SIGHTLINE_API_KEY_REQUESTS_PER_MINUTE": "3"})
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        site_id = _site(owner)
        key = owner.post("/api/keys", json={"name": "busy"}).json()["key"]
    finally:
        owner.close()
    reader = _bearer(server, key)
    answers = [reader.get(f"/api/sites/{site_id}/reports/summary") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert 1 <= int(answers[-1].headers["Retry-After"]) <= 60
    assert answers[-1].json()["error"]["code"] == "rate_limited"


def test_keys_list_their_scopes_and_refuse_unknown_or_no_scopes_naming_the_field(
    owner: httpx.Client,
) -> None:
    made = owner.post(
        "/api/keys",
        json={
            "name": "writer",
            "site_id": _site(owner),
            "scopes": ["events:write", "sites:read", "sites:read"],
        },
    )
    assert made.status_code == 201, made.text
    assert made.json()["scopes"] == ["sites:read", "events:write"]
    listed = next(k for k in owner.get("/api/keys").json()["keys"] if k["id"] == made.json()["id"])
    assert listed["scopes"] == ["sites:read", "events:write"]
    for scopes in ([], ["stats:write"], ["stats:read", 3], "stats:read", {"stats:read": True}):
        refused = owner.post("/api/keys", json={"name": "bad", "scopes": scopes})
        assert refused.status_code == 422, scopes
        assert refused.json()["error"]["field"] == "scopes", refused.text


def test_an_events_write_key_without_a_site_is_refused_at_creation_naming_the_site_id(
    owner: httpx.Client,
) -> None:
    before = owner.get("/api/keys").json()["keys"]
    for scopes in (["events:write"], ["stats:read", "events:write"]):
        refused = owner.post("/api/keys", json={"name": "backend", "scopes": scopes})
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["code"] == "site_required"
        assert error["field"] == "site_id"
        assert "one site" in error["message"]
    assert owner.get("/api/keys").json()["keys"] == before


def test_a_sites_write_key_provisions_sites_and_goals_without_a_browsers_origin(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    key = owner.post("/api/keys", json={"name": "agency", "scopes": ["sites:read", "sites:write"]}).json()
    agency = _bearer(console_server, key["key"])
    domain = f"p{uuid.uuid4().hex[:10]}.example.com"
    created = agency.post("/api/sites", json={"name": "Client shop", "domain": domain})
    assert created.status_code == 201, created.text
    site_id = created.json()["id"]
    assert agency.get(f"/api/sites/{site_id}").json()["domain"] == domain
    assert site_id in [s["id"] for s in owner.get("/api/sites").json()["sites"]]  # the team's site
    changed = agency.patch(f"/api/sites/{site_id}", json={"name": "Client shop (EU)", "cookieless": True})
    assert (changed.status_code, changed.json()["name"]) == (200, "Client shop (EU)")
    goal = agency.post(
        f"/api/sites/{site_id}/goals", json={"name": "Signup", "kind": "event", "event": "signup"}
    )
    assert goal.status_code == 201, goal.text
    assert agency.patch(f"/api/goals/{goal.json()['id']}", json={"name": "Sign-up"}).status_code == 200
    assert [g["name"] for g in agency.get(f"/api/sites/{site_id}/goals").json()["goals"]] == ["Sign-up"]
    assert agency.delete(f"/api/goals/{goal.json()['id']}").status_code == 204
    assert agency.get(f"/api/sites/{site_id}/reports/summary").status_code == 403  # stats:read
    assert agency.delete(f"/api/sites/{site_id}").status_code == 204
    assert owner.get(f"/api/sites/{site_id}").status_code == 404


def test_a_sites_write_key_for_one_site_changes_that_site_only_and_creates_none(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    mine, other = _site(owner), _site(owner)
    key = owner.post("/api/keys", json={"name": "one", "site_id": mine, "scopes": ["sites:write"]}).json()
    writer = _bearer(console_server, key["key"])
    assert writer.patch(f"/api/sites/{mine}", json={"name": "Renamed"}).status_code == 200
    goal = writer.post(f"/api/sites/{mine}/goals", json={"name": "Buy", "kind": "event", "event": "buy"})
    assert goal.status_code == 201
    others_goal = owner.post(f"/api/sites/{other}/goals", json={"name": "X", "kind": "event", "event": "x"})
    for refused in (
        writer.post("/api/sites", json={"name": "New", "domain": f"n{uuid.uuid4().hex[:8]}.example.com"}),
        writer.patch(f"/api/sites/{other}", json={"name": "Taken"}),
        writer.delete(f"/api/sites/{other}"),
        writer.patch(f"/api/goals/{others_goal.json()['id']}", json={"name": "Mine now"}),
        writer.post(f"/api/sites/{other}/goals", json={"name": "Y", "kind": "event", "event": "y"}),
    ):
        assert refused.status_code == 403, refused.request.url
        assert refused.json()["error"]["code"] == "forbidden"
    assert "may not create sites" in writer.post("/api/sites", json={"name": "N", "domain": "n.example"}).text
    names = {s["id"]: s["name"] for s in owner.get("/api/sites").json()["sites"]}
    assert names[mine] == "Renamed"
    assert names[other] != "Taken"
