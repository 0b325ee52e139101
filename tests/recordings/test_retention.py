"""Retention: recordings past ``recording_retention_days`` are deleted with their files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta

from sqlalchemy import text

from sightline.database import open_database
from sightline.database.types import utcnow
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
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
from tests.support import waits
from tests.support.server import LiveServer, create_owner

NOW = int(time.time() * 1000)


def recorded(server: LiveServer, site: RecordingSite) -> str:
    rid = new_recording_id()
    assert post_chunk(server, site, rid, 0, chunk(page_events(NOW))).status_code == 202
    assert post_chunk(server, site, rid, 1, chunk(moves(NOW + 1000))).status_code == 202
    return rid


def setup(server: LiveServer) -> RecordingSite:
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        return recording_site(owner)
    finally:
        owner.close()


def age(database_url: str, recording_id: str, days: int) -> None:
    db = open_database(database_url)
    try:
        with db.begin() as conn:
            conn.execute(
                text("UPDATE recordings SET started_at = :t WHERE id = :id"),
                {"t": utcnow() - timedelta(days=days), "id": recording_id},
            )
    finally:
        db.dispose()


def rows(database_url: str) -> tuple[set[str], set[str]]:
    db = open_database(database_url)
    try:
        with db.read() as conn:
            recordings = set(conn.execute(text("SELECT id FROM recordings")).scalars())
            chunks = set(conn.execute(text("SELECT recording_id FROM recording_chunks")).scalars())
    finally:
        db.dispose()
    return recordings, chunks


def test_the_cleanup_command_deletes_recordings_past_retention_and_their_files(
    start_server: StartServer, database_url: str
) -> None:
    server = start_server(database_url)
    site = setup(server)
    old = recorded(server, site)
    young = recorded(server, site)
    age(database_url, old, 31)
    age(database_url, young, 29)
    command = [
        sys.executable,
        "-m",
        "sightline.recordings.retention",
        "--data-dir",
        str(server.data_dir),
        "--database-url",
        database_url,
        "--recording-retention-days",
        "30",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=waits.COMMAND, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "deleted 1 recordings" in result.stdout
    assert stored_chunk_files(server.data_dir, old) == []
    assert len(stored_chunk_files(server.data_dir, young)) == 2
    assert rows(database_url) == ({young}, {young})


def test_the_server_deletes_old_recordings_when_it_starts_and_sweeps_unindexed_folders(
    start_server: StartServer,
) -> None:
    server = start_server(env={"SIGHTLINE_RECORDING_RETENTION_DAYS": "7"})
    site = setup(server)
    old = recorded(server, site)
    young = recorded(server, site)
    server.stop()
    url = f"sqlite:///{server.data_dir / 'sightline.db'}"
    age(url, old, 8)
    root = server.data_dir / "recordings"
    stale = root / "zz" / ("z" * 22)
    fresh = root / "yy" / ("y" * 22)
    for folder in (stale, fresh):
        folder.mkdir(parents=True)
        (folder / "00000000.json.gz").write_bytes(chunk(moves(NOW)))
    two_hours_ago = time.time() - 7200
    os.utime(stale, (two_hours_ago, two_hours_ago))
    server.start()
    deadline = time.monotonic() + waits.EVENTUALLY
    while stored_chunk_files(server.data_dir, old) or stale.exists():
        assert time.monotonic() < deadline, "the cleanup did not run"
        time.sleep(0.1)
    assert len(stored_chunk_files(server.data_dir, young)) == 2
    assert fresh.exists()  # it may be a chunk whose row is being committed right now
    assert rows(url)[0] == {young}
