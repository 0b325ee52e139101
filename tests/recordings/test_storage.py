"""A real server with ``--recordings-url s3://...``: chunks go to the bucket (moto's S3 server over
HTTP), replays stream from it, every deletion reaches it, and a bucket that cannot be used is
refused with 503 and shown down in health with what to do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.recordings.helpers import (
    RecordingSite,
    chunk,
    moves,
    new_recording_id,
    page_events,
    post_chunk,
    recording_site,
    stored_chunk_files,
)
from tests.support.objectstore import ObjectStore
from tests.support.ports import free_port
from tests.support.server import LiveServer, create_owner

START = 1_700_000_000_000


def s3_server(directory: Path, objects: ObjectStore, recordings_url: str) -> LiveServer:
    env = {**objects.env(), "SIGHTLINE_RECORDINGS_URL": recordings_url}
    server = LiveServer(directory / "data", None, env=env).start()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    return server


@pytest.fixture
def bucket(object_store: ObjectStore) -> str:
    return object_store.create_bucket()


@pytest.fixture
def on_s3(tmp_path: Path, object_store: ObjectStore, bucket: str) -> Iterator[LiveServer]:
    server = s3_server(tmp_path, object_store, object_store.url(bucket, "prod"))
    yield server
    server.stop()


def record(server: LiveServer, site: RecordingSite, visitor: str = "visitor-1") -> tuple[str, list[object]]:
    """A recording of two chunks; its id and the events sent, in order."""
    recording = new_recording_id()
    sent: list[object] = []
    for seq, events in enumerate([page_events(START), moves(START + 2000)]):
        answer = post_chunk(server, site, recording, seq, chunk(events, visitor=visitor))
        assert answer.status_code == 202, answer.text
        assert answer.json()["stored"] is True
        sent.extend(events)
    return recording, sent


def test_chunks_go_to_the_bucket_and_replay_from_it(
    on_s3: LiveServer, object_store: ObjectStore, bucket: str
) -> None:
    owner = sign_in(on_s3)
    site = recording_site(owner)
    recording, sent = record(on_s3, site)
    folder = f"prod/{recording[:2]}/{recording}/"
    assert object_store.keys(bucket) == [folder + "00000000.json.gz", folder + "00000001.json.gz"]
    assert stored_chunk_files(on_s3.data_dir) == []  # nothing on the node's own disk
    replay = owner.get(f"/api/recordings/{recording}/events")
    assert replay.status_code == 200, replay.text
    assert orjson.loads(replay.content)["events"] == sent
    assert owner.get(f"/api/recordings/{recording}").json()["chunks"] == 2

    service = owner.get("/api/health").json()["services"]["recordings"]
    assert service["status"] == "ok", service
    assert (service["storage"], service["location"], service["bucket"]) == (
        "s3",
        f"s3://{bucket}/prod/",
        bucket,
    )
    assert service["recordings"] == 1
    owner.close()


def test_deleting_a_recording_erasing_a_visitor_and_deleting_a_site_empty_the_bucket(
    on_s3: LiveServer, object_store: ObjectStore, bucket: str
) -> None:
    owner = sign_in(on_s3)
    site = recording_site(owner)
    deleted, _ = record(on_s3, site)
    erased, _ = record(on_s3, site, visitor="visitor-to-erase")
    kept, _ = record(on_s3, site)
    other_site = recording_site(owner)
    with_site, _ = record(on_s3, other_site)

    def folders() -> set[str]:
        return {key.split("/")[2] for key in object_store.keys(bucket)}

    assert folders() == {deleted, erased, kept, with_site}
    assert owner.delete(f"/api/recordings/{deleted}").status_code == 204
    assert folders() == {erased, kept, with_site}
    erasure = owner.delete(f"/api/sites/{site.id}/visitors/visitor-to-erase")
    assert erasure.status_code == 202, erasure.text
    assert erasure.json()["erasure"]["recordings_removed"] == 1
    assert folders() == {kept, with_site}
    assert owner.delete(f"/api/sites/{other_site.id}").status_code == 204
    assert folders() == {kept}
    assert owner.get(f"/api/recordings/{kept}/events").status_code == 200
    owner.close()


@pytest.mark.parametrize("fault", ["unreachable", "no_bucket"])
def test_a_bucket_that_cannot_be_used_refuses_chunks_for_later_and_health_says_what_to_do(
    tmp_path: Path, object_store: ObjectStore, fault: str
) -> None:
    if fault == "unreachable":
        url = f"s3://recordings/prod?endpoint=http://127.0.0.1:{free_port()}"  # nothing listens
    else:
        url = object_store.url("bucket-nobody-made")
    server = s3_server(tmp_path, object_store, url)
    try:
        owner = sign_in(server)
        site = recording_site(owner)
        refused = post_chunk(server, site, new_recording_id(), 0, chunk(page_events(START)))
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "storage_unavailable"
        assert int(refused.headers["retry-after"]) > 0  # the recorder sends it again later

        report = owner.get("/api/health").json()
        service = report["services"]["recordings"]
        assert service["status"] == "down", service
        assert service["error"] == fault
        assert service["storage"] == "s3"
        assert "refused (503) and sent again later" in service["problem"]
        assert service["fix"]
        assert service["failing_since"]
        assert report["status"] == "degraded"  # events are still taken: the service is not down
        expected = "could not be reached" if fault == "unreachable" else "does not exist"
        assert expected in service["problem"]
        owner.close()
    finally:
        server.stop()


def test_replaying_while_the_bucket_cannot_be_reached_answers_503_not_an_empty_recording(
    tmp_path: Path, object_store: ObjectStore, bucket: str
) -> None:
    """A recording made on a server, which then starts again with the bucket out of reach."""
    first = s3_server(tmp_path, object_store, object_store.url(bucket, "prod"))
    try:
        owner = sign_in(first)
        recording, _ = record(first, recording_site(owner))
        owner.close()
    finally:
        first.stop()
    nowhere = f"s3://{bucket}/prod?endpoint=http://127.0.0.1:{free_port()}"
    env = {**object_store.env(), "SIGHTLINE_RECORDINGS_URL": nowhere}
    again = LiveServer(first.data_dir, None, env=env).start()
    try:
        owner = sign_in(again)
        replay = owner.get(f"/api/recordings/{recording}/events")
        assert replay.status_code == 503, replay.text
        error = replay.json()["error"]
        assert error["code"] == "storage_unavailable"
        assert "Health page" in error["message"]
        assert owner.get(f"/api/recordings/{recording}").status_code == 200  # the index still answers
        owner.close()
    finally:
        again.stop()
