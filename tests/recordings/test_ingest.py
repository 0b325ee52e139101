"""The recorder's upload endpoint: origin and switches, idempotent chunks, limits, durable answers."""

from __future__ import annotations

import gzip
import os
import time

import httpx
import orjson
from sqlalchemy import text

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.recordings.helpers import (
    chunk,
    moves,
    new_recording_id,
    page_events,
    post_chunk,
    recording_site,
    stored_chunk_files,
)
from tests.support.server import LiveServer, create_owner

NOW = int(time.time() * 1000)
NOT_UTF8 = b'{"session_id":"s","visitor_id":"v","events":[{"type":3,"timestamp":1,"data":"\xff"}]}'


def test_a_chunk_is_answered_202_once_stored_and_a_repeat_stores_nothing_new(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    first = post_chunk(console_server, site, rid, 0, chunk(page_events(NOW)))
    assert first.status_code == 202, first.text
    assert first.json() == {"recording_id": rid, "seq": 0, "stored": True, "snapshot": True}
    assert first.headers["access-control-allow-origin"] == site.origin
    again = post_chunk(console_server, site, rid, 0, chunk(page_events(NOW)))
    assert again.status_code == 202
    assert again.json()["stored"] is False
    files = [p for p in stored_chunk_files(console_server.data_dir) if rid in str(p)]
    assert len(files) == 1
    listed = owner.get(f"/api/sites/{site.id}/recordings").json()["recordings"]
    assert [r["id"] for r in listed] == [rid]
    assert listed[0]["size_bytes"] == files[0].stat().st_size


def test_a_recording_without_a_full_snapshot_is_acknowledged_without_snapshot_and_not_listed(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    answer = post_chunk(console_server, site, rid, 1, chunk(moves(NOW)))
    assert answer.status_code == 202
    assert answer.json()["snapshot"] is False
    assert owner.get(f"/api/sites/{site.id}/recordings").json()["recordings"] == []
    later = post_chunk(console_server, site, rid, 0, chunk(page_events(NOW - 1000)))
    assert later.json()["snapshot"] is True
    assert [r["id"] for r in owner.get(f"/api/sites/{site.id}/recordings").json()["recordings"]] == [rid]


def test_chunks_are_refused_from_other_origins_and_when_recording_or_collection_is_off(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    body = chunk(page_events(NOW))
    foreign = post_chunk(console_server, site, new_recording_id(), 0, body, origin="https://evil.example")
    assert foreign.status_code == 403
    assert foreign.json()["error"]["code"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in foreign.headers
    owner.patch(f"/api/sites/{site.id}", json={"recording_enabled": False})
    off = post_chunk(console_server, site, new_recording_id(), 0, body)
    assert off.status_code == 403
    assert off.json()["error"]["code"] == "recording_disabled"
    owner.patch(f"/api/sites/{site.id}", json={"recording_enabled": True, "collection_enabled": False})
    stopped = post_chunk(console_server, site, new_recording_id(), 0, body)
    assert stopped.status_code == 403
    assert stopped.json()["error"]["code"] == "collection_disabled"
    unknown = httpx.post(
        f"{console_server.base_url}/i/recordings/{new_recording_id()}/chunks",
        params={"key": "no-such-key", "seq": "0"},
        content=body,
        headers={"Origin": site.origin},
    )
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "unknown_site"


def test_malformed_chunks_are_refused_with_the_field_at_fault(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    cases: list[tuple[bytes, int, str, str | None]] = [
        (b"\x1f\x8bnot gzip at all", 400, "malformed_gzip", None),
        (gzip.compress(b"{not json"), 400, "malformed_json", None),
        (gzip.compress(NOT_UTF8), 400, "malformed_json", None),
        (gzip.compress(b"[]"), 422, "invalid_field", "body"),
        (
            gzip.compress(orjson.dumps({"visitor_id": "v", "events": moves(NOW)})),
            422,
            "invalid_field",
            "session_id",
        ),
        (chunk([]), 422, "invalid_field", "events"),
        (chunk([{"type": 3, "timestamp": "soon"}]), 422, "invalid_field", "events.0.timestamp"),
        (chunk([{"type": "x", "timestamp": 1}]), 422, "invalid_field", "events.0.type"),
    ]
    for body, status, code, field in cases:
        answer = post_chunk(console_server, site, rid, 0, body)
        assert answer.status_code == status, (body, answer.text)
        error = answer.json()["error"]
        assert error["code"] == code
        assert error.get("field") == field
    bad_seq = post_chunk(console_server, site, rid, "-1", chunk(page_events(NOW)))
    assert bad_seq.status_code == 422
    assert bad_seq.json()["error"]["field"] == "seq"
    bad_id = post_chunk(console_server, site, "short", 0, chunk(page_events(NOW)))
    assert bad_id.status_code == 422
    assert bad_id.json()["error"]["field"] == "recording_id"
    assert [p for p in stored_chunk_files(console_server.data_dir) if rid in str(p)] == []


def test_a_chunk_that_inflates_beyond_8_mib_or_a_body_over_1_mib_is_refused(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    bomb = gzip.compress(b"{" + b" " * (8 * 1024 * 1024) + b"}")
    inflated = post_chunk(console_server, site, new_recording_id(), 0, bomb)
    assert inflated.status_code == 413
    assert inflated.json()["error"]["code"] == "chunk_too_large"
    big = post_chunk(console_server, site, new_recording_id(), 0, os.urandom(1024 * 1024 + 1))
    assert big.status_code == 413
    assert big.json()["error"]["code"] == "body_too_large"


def test_a_plain_json_chunk_sent_while_the_page_unloads_is_stored_compressed(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    raw = orjson.dumps({"session_id": "s", "visitor_id": "v", "events": page_events(NOW)})
    assert post_chunk(console_server, site, rid, 0, raw).status_code == 202
    (path,) = [p for p in stored_chunk_files(console_server.data_dir) if rid in str(p)]
    assert gzip.decompress(path.read_bytes()) == raw


def test_a_recording_stops_growing_at_its_size_limit(start_server: StartServer) -> None:
    server = start_server(env={"SIGHTLINE_RECORDING_MAX_MB": "1"})
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        _fill_to_the_limit(server, owner)
    finally:
        owner.close()


def _fill_to_the_limit(server: LiveServer, owner: httpx.Client) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    noise = [{"type": 5, "timestamp": NOW, "data": {"tag": "x", "payload": os.urandom(300_000).hex()}}]
    assert post_chunk(server, site, rid, 0, chunk(page_events(NOW))).status_code == 202
    answers = [post_chunk(server, site, rid, seq, chunk(noise)).status_code for seq in range(1, 5)]
    assert answers[:3] == [202, 202, 202]
    last = post_chunk(server, site, rid, 4, chunk(noise))
    assert last.status_code == 413
    assert last.json()["error"]["code"] == "recording_too_large"
    size = owner.get(f"/api/recordings/{rid}").json()["size_bytes"]
    assert size <= 1024 * 1024
    assert size == sum(p.stat().st_size for p in stored_chunk_files(server.data_dir))


def test_an_acknowledged_chunk_survives_the_server_being_killed(start_server: StartServer) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        site = recording_site(owner)
    finally:
        owner.close()
    rid = new_recording_id()
    body = chunk(page_events(NOW))
    assert post_chunk(server, site, rid, 0, body).status_code == 202
    server.kill()
    (path,) = stored_chunk_files(server.data_dir)
    assert path.read_bytes() == body
    db = open_database(f"sqlite:///{server.data_dir / 'sightline.db'}")
    try:
        with db.read() as conn:
            rows = conn.execute(text("SELECT recording_id, seq FROM recording_chunks")).all()
    finally:
        db.dispose()
    assert [(r.recording_id, r.seq) for r in rows] == [(rid, 0)]


def test_the_preflight_answers_the_sites_own_origin_only(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    url = f"{console_server.base_url}/i/recordings/{new_recording_id()}/chunks"
    asked = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    own = httpx.options(url, params={"key": site.key, "seq": "0"}, headers={"Origin": site.origin, **asked})
    assert own.status_code == 204
    assert own.headers["access-control-allow-origin"] == site.origin
    assert "access-control-allow-credentials" not in own.headers
    foreign = httpx.options(
        url, params={"key": site.key, "seq": "0"}, headers={"Origin": "https://evil.example", **asked}
    )
    assert foreign.status_code == 403
    assert "access-control-allow-origin" not in foreign.headers


def test_a_bot_gets_the_same_answer_and_nothing_is_stored(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    answer = httpx.post(
        f"{console_server.base_url}/i/recordings/{rid}/chunks",
        params={"key": site.key, "seq": "0"},
        content=chunk(page_events(NOW)),
        headers={"Origin": site.origin, "User-Agent": "Googlebot/2.1 (+http://www.google.com/bot.html)"},
    )
    assert answer.status_code == 202
    assert answer.json() == {"recording_id": rid, "seq": 0, "stored": False, "snapshot": True}
    assert stored_chunk_files(console_server.data_dir, rid) == []
    assert owner.get(f"/api/recordings/{rid}").status_code == 404
