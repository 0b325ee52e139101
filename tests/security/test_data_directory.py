"""One server per data directory, and a failed upload never deletes another's acknowledged chunks."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from sightline.accounts.users import create_user
from sightline.database import open_database
from sightline.datadir import DataDirError, claim
from sightline.recordings import chunks
from sightline.recordings.service import Recordings
from sightline.recordings.store import FileChunkStore
from sightline.sites.service import create_site
from tests.conftest import StartServer
from tests.support.ports import free_port


def test_a_second_server_on_the_same_data_directory_is_refused_clearly(
    start_server: StartServer, tmp_path: Path
) -> None:
    first = start_server()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    second = subprocess.run(
        [
            sys.executable,
            "-m",
            "sightline.cli",
            "serve",
            "--port",
            str(free_port()),
            "--data-dir",
            str(first.data_dir),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert second.returncode == 1
    assert "another Sightline server is already using the data directory" in second.stderr
    assert f"(process {first.process.pid if first.process else ''})" in second.stderr
    assert "Traceback" not in second.stderr
    with first.client() as client:
        assert client.get("/healthz").status_code == 200


def test_the_lock_is_released_with_its_process_and_refused_within_one(tmp_path: Path) -> None:
    lock = claim(tmp_path / "data")
    with pytest.raises(DataDirError, match="already using"):
        claim(tmp_path / "data")
    lock.release()
    claim(tmp_path / "data").release()


def _chunk(session: str) -> chunks.Chunk:
    document = {
        "session_id": session,
        "visitor_id": "v",
        "events": [{"type": 4, "timestamp": 1_700_000_000_000, "data": {"href": "https://a.example/"}}],
    }
    return chunks.decode(gzip.compress(orjson.dumps(document)))


def test_a_failed_first_upload_keeps_the_chunks_another_writer_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers (two processes before the lock, or two nodes) race on one new recording: the
    loser's cleanup used to remove the whole recording folder, winner's acknowledged chunks too."""
    db = open_database(f"sqlite:///{tmp_path / 'sightline.db'}")
    with db.begin() as conn:
        user = create_user(conn, "owner@example.com", "correct horse battery staple")
        site = create_site(conn, user["id"], "Shop", "a.example")
    store = FileChunkStore(tmp_path / "recordings")
    loser, winner = Recordings(db, store, 1 << 20), Recordings(db, store, 1 << 20)
    recording = "r" * 22

    def race(conn: Any, *args: Any) -> bool:
        # The winner stores and commits chunks 0 and 1 while the loser's transaction is open.
        for seq in (0, 1):
            assert winner.accept(site["id"], recording, seq, _chunk("s")).stored
        raise RuntimeError("the loser's transaction fails")

    monkeypatch.setattr(loser, "_index", race)
    with pytest.raises(RuntimeError):
        loser.accept(site["id"], recording, 7, _chunk("s"))
    assert store.get(recording, 0)
    assert store.get(recording, 1)
    assert not store.path(recording, 7).exists()
    db.dispose()
