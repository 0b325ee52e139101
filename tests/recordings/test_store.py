"""The two chunk stores keep the same promises: a directory and an S3-compatible bucket (moto's
server over HTTP, reached by boto3 as Sightline reaches Amazon S3 or MinIO)."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest

from sightline import locations
from sightline.recordings import s3 as s3_module
from sightline.recordings.s3 import S3ChunkStore
from sightline.recordings.store import (
    ChunkMissingError,
    ChunkStore,
    FileChunkStore,
    StorageUnavailableError,
    open_store,
)
from tests.recordings.helpers import new_recording_id
from tests.support.objectstore import ObjectStore
from tests.support.ports import free_port


@pytest.fixture(params=["directory", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ChunkStore:
    if request.param == "directory":
        return open_store(f"file://{tmp_path / 'shared'}", tmp_path / "data")
    objects: ObjectStore = request.getfixturevalue("s3_env")
    return open_store(objects.url(objects.create_bucket()), tmp_path / "data")


def body(text: str) -> bytes:
    return gzip.compress(text.encode())


def test_a_stored_chunk_reads_back_and_a_second_put_replaces_it(store: ChunkStore) -> None:
    recording = new_recording_id()
    store.put(recording, 3, body("first"))
    assert gzip.decompress(store.get(recording, 3)) == b"first"
    store.put(recording, 3, body("again"))
    assert gzip.decompress(store.get(recording, 3)) == b"again"
    with pytest.raises(ChunkMissingError):
        store.get(recording, 4)
    with pytest.raises(ChunkMissingError):
        store.get(new_recording_id(), 0)


def test_the_store_lists_its_recordings_and_their_chunks_in_order(store: ChunkStore) -> None:
    first, second = new_recording_id(), new_recording_id()
    for seq in (10, 2, 0):
        store.put(first, seq, body(f"chunk {seq}"))
    store.put(second, 7, body("only"))
    assert sorted(store.recording_ids()) == sorted([first, second])
    assert store.seqs(first) == [0, 2, 10]
    assert store.seqs(second) == [7]
    assert store.seqs(new_recording_id()) == []
    modified = store.modified(first)
    assert modified is not None
    assert abs(modified - time.time()) < 120
    assert store.modified(new_recording_id()) is None


def test_deleting_a_chunk_or_a_recording_removes_only_what_was_asked(store: ChunkStore) -> None:
    kept, gone = new_recording_id(), new_recording_id()
    for seq in range(3):
        store.put(kept, seq, body("kept"))
        store.put(gone, seq, body("gone"))
    store.delete_chunk(kept, 1)
    assert store.seqs(kept) == [0, 2]
    store.delete_recording(gone)
    assert store.seqs(gone) == []
    assert list(store.recording_ids()) == [kept]
    store.delete_recording(gone)  # nothing left to delete is no error
    store.delete_chunk(gone, 9)
    store.delete_chunk(kept, 0)
    store.delete_chunk(kept, 2)
    assert list(store.recording_ids()) == []


def test_a_recording_of_more_chunks_than_one_delete_request_takes_is_deleted_whole(
    s3_env: ObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(s3_module, "DELETE_BATCH", 4)
    store = open_store(s3_env.url(s3_env.create_bucket()), tmp_path)
    recording = new_recording_id()
    for seq in range(11):
        store.put(recording, seq, body(str(seq)))
    store.delete_recording(recording)
    assert store.seqs(recording) == []


def test_s3_objects_are_laid_out_as_the_directory_lays_out_files(s3_env: ObjectStore, tmp_path: Path) -> None:
    bucket = s3_env.create_bucket()
    objects = open_store(s3_env.url(bucket, "team/recordings"), tmp_path)
    files = FileChunkStore(tmp_path / "files")
    recording = new_recording_id()
    objects.put(recording, 12, body("x"))
    files.put(recording, 12, body("x"))
    relative = files.path(recording, 12).relative_to(files.root).as_posix()
    assert s3_env.keys(bucket) == [f"team/recordings/{relative}"]
    assert objects.check() == {"bucket": bucket, "endpoint": s3_env.endpoint}


def test_a_missing_bucket_is_reported_with_what_to_do(s3_env: ObjectStore, tmp_path: Path) -> None:
    store = open_store(s3_env.url("no-such-bucket-here"), tmp_path)
    with pytest.raises(StorageUnavailableError) as raised:
        store.check()
    assert raised.value.kind == "no_bucket"
    assert "'no-such-bucket-here' does not exist" in raised.value.problem
    assert "Create the bucket" in raised.value.fix
    with pytest.raises(StorageUnavailableError) as on_put:
        store.put(new_recording_id(), 0, body("x"))
    assert on_put.value.kind == "no_bucket"


def test_an_endpoint_that_does_not_answer_is_reported_quickly_with_what_to_do(
    s3_env: ObjectStore, tmp_path: Path
) -> None:
    place = locations.parse(f"s3://recordings/x?endpoint=http://127.0.0.1:{free_port()}")
    assert isinstance(place, locations.Bucket)
    store = S3ChunkStore(place)
    started = time.monotonic()
    with pytest.raises(StorageUnavailableError) as raised:
        store.check()
    assert time.monotonic() - started < 10
    assert raised.value.kind == "unreachable"
    assert "could not be reached" in raised.value.problem
    assert "Check that the object store runs" in raised.value.fix
    assert isinstance(raised.value, OSError)  # ingest answers 503 to it, as to a failing disk


def test_a_directory_that_cannot_be_written_is_reported_with_what_to_do(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the directory should be")
    store = FileChunkStore(blocker / "recordings")
    with pytest.raises(StorageUnavailableError) as raised:
        store.check()
    assert raised.value.kind == "directory_unavailable"
    assert str(blocker / "recordings") in raised.value.problem
    assert "mounted" in raised.value.fix
