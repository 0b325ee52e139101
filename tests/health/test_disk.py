"""Free space running out on a real (small, tmpfs) file system under a running server."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.ingest.helpers import Site, Visitor, batch, batch_id, event, wait_until
from tests.recordings.helpers import chunk, new_recording_id, page_events, post_chunk, recording_site
from tests.support.server import LiveServer, create_owner
from tests.surveys.helpers import create_survey, publish

MIB = 1024 * 1024
DISK_MB = 96
WARN_MB = 48
REFUSE_MB = 32


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 96 MiB tmpfs mounted for the test (the tests run as root)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here ({done.stderr.strip()}); run the tests as root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave_bytes: int) -> Path:
    """A file that leaves about ``leave_bytes`` free on ``disk``."""
    filler = disk / "filler.bin"
    size = shutil.disk_usage(disk).free - leave_bytes
    with filler.open("wb") as out:
        block = b"\0" * MIB
        while size > 0:
            out.write(block[: min(size, MIB)])
            size -= MIB
        out.flush()
        os.fsync(out.fileno())
    return filler


def test_ingest_refuses_new_data_with_507_below_the_threshold_and_takes_it_again_when_space_returns(
    small_disk: Path,
) -> None:
    env = {
        "SIGHTLINE_DISK_WARN_FREE_MB": str(WARN_MB),
        "SIGHTLINE_DISK_REFUSE_FREE_MB": str(REFUSE_MB),
        "SIGHTLINE_REPORT_COLUMNS_MEMORY_MB": "64",
    }
    server = LiveServer(small_disk / "data", env=env).start()
    try:
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        site = Site.create(owner, "localhost:38123")
        recorder = recording_site(owner)
        survey = create_survey(owner, site.id)
        publish(owner, survey["id"])
        assert owner.get("/api/health").json()["services"]["disk"]["status"] == "ok"
        with Visitor(server.base_url, site) as visitor:
            assert visitor.send(batch(site, event())).status_code == 202

            filler = fill(small_disk, (REFUSE_MB - 8) * MIB)
            refused_id = batch_id()
            wait_until(lambda: visitor.send(batch(site, event(), bid=refused_id)).status_code == 507)
            refused = visitor.send(batch(site, event(), bid=refused_id))
            assert refused.status_code == 507
            assert refused.json()["error"]["code"] == "insufficient_storage"
            assert refused.headers["retry-after"]
            assert refused.headers["access-control-allow-origin"] == site.origin
            answer = {
                "key": site.key,
                "survey_id": survey["id"],
                "revision": 1,
                "response_id": uuid.uuid4().hex,
                "visitor_id": "v-1",
                "page_path": "/app/",
                "answers": {"plan": "pro"},
            }
            response = visitor.client.post("/i/feedback/responses", content=orjson.dumps(answer))
            assert response.status_code == 507
            assert response.json()["error"]["code"] == "insufficient_storage"
            chunk_answer = post_chunk(
                server, recorder, new_recording_id(), 0, chunk(page_events(1_700_000_000_000))
            )
            assert chunk_answer.status_code == 507

            disk = owner.get("/api/health").json()["services"]["disk"]
            assert disk["status"] == "down"
            largest = list(disk["used_bytes"])
            assert largest[0] == "outside the data directory"  # the filler
            assert "sightline.db" in largest
            assert "507" in disk["problem"]
            assert disk["fix"]
            assert disk["refusing"] == ["data"]

            filler.unlink()
            wait_until(
                lambda: visitor.send(batch(site, event(), bid=refused_id)).status_code == 202, timeout=10
            )
            assert (
                visitor.send(batch(site, event(), bid=refused_id)).status_code == 202
            )  # a retry: stored once
            again = visitor.client.post("/i/feedback/responses", content=orjson.dumps(answer))
            assert again.status_code == 202, again.text
        assert owner.get("/api/health").json()["services"]["disk"]["status"] == "ok"
        owner.close()
        metrics = httpx.get(server.base_url + "/metrics", timeout=30).text
        assert 'sightline_ingest_dropped_batches_total{reason="disk_full"}' in metrics
    finally:
        server.stop()
    database = sqlite3.connect(small_disk / "data" / "sightline.db")
    try:
        assert database.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert database.execute("SELECT count(*) FROM events WHERE site_id = ?", (site.id,)).fetchone() == (
            2,
        )
        assert database.execute("SELECT count(*) FROM survey_responses").fetchone() == (1,)
    finally:
        database.close()


def test_a_disk_that_fills_under_ingest_loses_nothing_acknowledged_and_corrupts_nothing(
    small_disk: Path,
) -> None:
    """With the threshold at its minimum, SQLite itself meets the full disk: 503 or 507, never 500."""
    env = {"SIGHTLINE_DISK_WARN_FREE_MB": "2", "SIGHTLINE_DISK_REFUSE_FREE_MB": "1"}
    server = LiveServer(small_disk / "data", env=env).start()
    acknowledged: set[str] = set()
    try:
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        site = Site.create(owner, "localhost:38124")
        owner.close()
        fill(small_disk, 3 * MIB)
        big = {"a": "x" * 2000, "b": "y" * 800}  # 20 of them: a batch just under 64 KiB
        statuses: set[int] = set()
        with Visitor(server.base_url, site) as visitor:
            for _ in range(200):
                bid = batch_id()
                response = visitor.send(batch(site, *[event(props=big) for _ in range(20)], bid=bid))
                statuses.add(response.status_code)
                if response.status_code == 202:
                    acknowledged.add(bid)
                elif response.status_code in (503, 507):
                    assert response.headers["retry-after"]
                    break
                else:
                    pytest.fail(f"unexpected answer {response.status_code}: {response.text}")
            assert statuses & {503, 507}, "the disk never filled"
            (small_disk / "filler.bin").unlink()
            deadline = time.monotonic() + 15
            while visitor.send(batch(site, event(), bid=(last := batch_id()))).status_code != 202:
                assert time.monotonic() < deadline, "ingest did not take events again"
                time.sleep(0.2)
            acknowledged.add(last)
    finally:
        server.stop()
    database = sqlite3.connect(small_disk / "data" / "sightline.db")
    try:
        assert database.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = {row[0] for row in database.execute("SELECT batch_id FROM event_batches")}
    finally:
        database.close()
    assert acknowledged <= stored


def test_a_full_recordings_directory_of_its_own_refuses_chunks_but_still_takes_events(
    small_disk: Path, tmp_path: Path
) -> None:
    env = {
        "SIGHTLINE_DISK_WARN_FREE_MB": str(WARN_MB),
        "SIGHTLINE_DISK_REFUSE_FREE_MB": str(REFUSE_MB),
        "SIGHTLINE_RECORDINGS_URL": f"file://{small_disk / 'recordings'}",  # a shared directory's disk
    }
    server = LiveServer(tmp_path / "data", env=env).start()
    try:
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        site = Site.create(owner, "localhost:38124")
        recorder = recording_site(owner)
        first = chunk(page_events(1_700_000_000_000))
        assert post_chunk(server, recorder, new_recording_id(), 0, first).status_code == 202
        assert any((small_disk / "recordings").rglob("*.json.gz"))
        filler = fill(small_disk, (REFUSE_MB - 8) * MIB)
        recording = new_recording_id()
        wait_until(lambda: post_chunk(server, recorder, recording, 0, first).status_code == 507)
        with Visitor(server.base_url, site) as visitor:
            assert visitor.send(batch(site, event())).status_code == 202  # the data directory has room
        disk = owner.get("/api/health").json()["services"]["disk"]
        assert disk["status"] == "down"
        assert disk["refusing"] == ["recordings"]
        assert disk["volumes"]["recordings"]["path"] == str(small_disk / "recordings")
        filler.unlink()
        wait_until(lambda: post_chunk(server, recorder, recording, 0, first).status_code == 202, timeout=10)
        owner.close()
    finally:
        server.stop()
