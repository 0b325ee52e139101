"""The owner's recordings API: list, metadata, the event stream for the player, delete, scoping."""

from __future__ import annotations

import secrets
import time

import httpx

from tests.conftest import sign_in
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


def record(server: LiveServer, site: object, start: int, seqs: int = 2, session: str = "visit") -> str:
    """A recording of ``seqs`` chunks: a page load, then mouse moves; returns its id."""
    rid = new_recording_id()
    assert post_chunk(server, site, rid, 0, chunk(page_events(start), session=session)).status_code == 202  # type: ignore[arg-type]
    for seq in range(1, seqs):
        body = chunk(moves(start + seq * 1000), session=session)
        assert post_chunk(server, site, rid, seq, body).status_code == 202  # type: ignore[arg-type]
    return rid


def test_a_site_lists_its_recordings_newest_first_with_their_figures(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    older = record(console_server, site, NOW - 60_000, session="visit-a")
    time.sleep(0.05)
    newer = record(console_server, site, NOW, seqs=3, session="visit-b")
    answer = owner.get(f"/api/sites/{site.id}/recordings")
    assert answer.status_code == 200
    listed = answer.json()["recordings"]
    assert [r["id"] for r in listed] == [newer, older]
    first = listed[0]
    assert set(first) == {
        "id",
        "session_id",
        "visitor_id",
        "started_at",
        "duration_ms",
        "pages",
        "size_bytes",
        "entry_page",
        "browser",
        "device",
    }
    assert (first["entry_page"], first["browser"], first["device"]) == ("/", "Chrome", "desktop")
    assert first["session_id"] == "visit-b"
    assert first["visitor_id"] == "visitor-1"
    assert first["pages"] == 1
    assert first["duration_ms"] == 2000 + 200
    sizes = sum(p.stat().st_size for p in stored_chunk_files(console_server.data_dir, newer))
    assert first["size_bytes"] == sizes
    assert owner.get(f"/api/sites/{site.id}/recordings", params={"offset": "1"}).json()["recordings"] == [
        listed[1]
    ]
    assert owner.get(f"/api/sites/{site.id}/recordings", params={"offset": "2"}).json()["recordings"] == []


def test_the_offset_is_checked_and_an_unknown_site_is_404(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    for bad in ("-1", "x", "100001", "1.5"):
        answer = owner.get(f"/api/sites/{site.id}/recordings", params={"offset": bad})
        assert answer.status_code == 422, bad
        assert answer.json()["error"]["field"] == "offset"
    assert owner.get("/api/sites/999999/recordings").status_code == 404


def test_the_metadata_and_the_event_stream_of_a_recording(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    # Chunks arrive out of order (a retried chunk overtaken by the next one); the stream is in seq order.
    assert post_chunk(console_server, site, rid, 2, chunk(moves(NOW + 3000, 2))).status_code == 202
    assert post_chunk(console_server, site, rid, 0, chunk(page_events(NOW))).status_code == 202
    assert post_chunk(console_server, site, rid, 1, chunk(moves(NOW + 2000, 2))).status_code == 202
    meta = owner.get(f"/api/recordings/{rid}")
    assert meta.status_code == 200
    details = meta.json()
    assert details["id"] == rid
    assert details["site_id"] == site.id
    assert details["chunks"] == 3
    assert details["duration_ms"] == 3100
    events = owner.get(f"/api/recordings/{rid}/events")
    assert events.status_code == 200
    assert events.headers["content-type"].startswith("application/json")
    assert events.headers["cache-control"] == "no-store"
    body = events.json()
    assert body["recording_id"] == rid
    stamps = [e["timestamp"] for e in body["events"]]
    expected = [e["timestamp"] for e in page_events(NOW) + moves(NOW + 2000, 2) + moves(NOW + 3000, 2)]
    assert stamps == expected
    assert [e["type"] for e in body["events"][:2]] == [4, 2]


def test_deleting_a_recording_removes_its_rows_and_files(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = record(console_server, site, NOW)
    kept = record(console_server, site, NOW)
    assert len(stored_chunk_files(console_server.data_dir, rid)) == 2
    deleted = owner.delete(f"/api/recordings/{rid}")
    assert deleted.status_code == 204
    assert stored_chunk_files(console_server.data_dir, rid) == []
    assert not (console_server.data_dir / "recordings" / rid[:2] / rid).exists()
    assert owner.get(f"/api/recordings/{rid}").status_code == 404
    assert owner.get(f"/api/recordings/{rid}/events").status_code == 404
    assert owner.delete(f"/api/recordings/{rid}").status_code == 404
    assert [r["id"] for r in owner.get(f"/api/sites/{site.id}/recordings").json()["recordings"]] == [kept]
    assert len(stored_chunk_files(console_server.data_dir, kept)) == 2


def test_another_owner_can_neither_see_nor_delete_a_recording(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = record(console_server, site, NOW)
    email = f"other-{secrets.token_hex(3)}@example.com"
    create_owner(console_server, email, "another long passphrase here")
    other = sign_in(console_server, email, "another long passphrase here")
    try:
        assert other.get(f"/api/sites/{site.id}/recordings").status_code == 404
        assert other.get(f"/api/recordings/{rid}").status_code == 404
        assert other.get(f"/api/recordings/{rid}/events").status_code == 404
        assert other.delete(f"/api/recordings/{rid}").status_code == 404
    finally:
        other.close()
    assert owner.get(f"/api/recordings/{rid}").status_code == 200
    assert len(stored_chunk_files(console_server.data_dir, rid)) == 2


def test_the_recordings_api_needs_a_session_and_the_console_origin_to_delete(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = record(console_server, site, NOW)
    anonymous = httpx.get(f"{console_server.base_url}/api/recordings/{rid}/events")
    assert anonymous.status_code == 401
    foreign = owner.delete(f"/api/recordings/{rid}", headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    assert owner.get(f"/api/recordings/{rid}").status_code == 200


def test_health_reports_the_recordings_service(console_server: LiveServer, owner: httpx.Client) -> None:
    site = recording_site(owner)
    record(console_server, site, NOW)
    service = owner.get("/api/health").json()["services"]["recordings"]
    assert service["status"] == "ok"
    assert service["recordings"] >= 1
    on_disk = sum(p.stat().st_size for p in stored_chunk_files(console_server.data_dir))
    assert service["used_bytes"] == on_disk
    assert service["free_bytes"] > 0


def test_the_entry_page_is_the_earliest_page_even_when_its_chunk_arrives_late(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site = recording_site(owner)
    rid = new_recording_id()
    later = page_events(NOW + 30_000, href="https://shop.example/second?token=secret")
    first = page_events(NOW, href="https://shop.example/first?email=a%40b.example#top")
    assert post_chunk(console_server, site, rid, 1, chunk(later)).status_code == 202
    assert post_chunk(console_server, site, rid, 0, chunk(first)).status_code == 202
    listed = owner.get(f"/api/sites/{site.id}/recordings").json()["recordings"]
    assert [(r["id"], r["entry_page"]) for r in listed] == [(rid, "/first")]
