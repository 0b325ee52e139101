"""``sightline backup`` while a real server takes events, ``sightline restore`` into a fresh place,
and the refusals of a damaged, foreign or misplaced backup."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.ingest.helpers import Site, Visitor, batch, batch_id, event
from tests.recordings.helpers import chunk, moves, new_recording_id, page_events, post_chunk, recording_site
from tests.reports.helpers import wait_caught_up
from tests.support.objectstore import ObjectStore
from tests.support.ports import free_port
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    command = [sys.executable, "-m", "sightline.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def batch_ids(database: Path) -> set[str]:
    conn = sqlite3.connect(database)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return {row[0] for row in conn.execute("SELECT batch_id FROM event_batches")}
    finally:
        conn.close()


def test_a_backup_made_under_load_restores_into_a_fresh_data_directory_with_every_figure(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    site = Site.create(owner, "localhost:38200")
    recorder = recording_site(owner)
    recording = new_recording_id()
    assert (
        post_chunk(server, recorder, recording, 0, chunk(page_events(1_700_000_000_000))).status_code == 202
    )

    acknowledged: list[str] = []
    stop = threading.Event()

    def load() -> None:
        with Visitor(server.base_url, site) as visitor:
            while not stop.is_set():
                bid = batch_id()
                if visitor.send(batch(site, event(), bid=bid)).status_code == 202:
                    acknowledged.append(bid)

    sender = threading.Thread(target=load)
    sender.start()
    try:
        while len(acknowledged) < 20:
            stop.wait(0.05)
        before = set(acknowledged)
        backup_dir = tmp_path / "backup"
        made = cli("backup", str(backup_dir), "--data-dir", str(server.data_dir))
        assert made.returncode == 0, made.stderr
        during = len(acknowledged) - len(before)
    finally:
        stop.set()
        sender.join()
    assert during > 0, "no event was taken while the backup ran"
    manifest = json.loads((backup_dir / "manifest.json").read_text())
    assert manifest["format"] == "sightline-backup"
    assert [p["name"] for p in manifest["parts"]] == ["store", "database", "recordings"]
    assert all(len(f["sha256"]) == 64 for p in manifest["parts"] for f in p["files"])

    fresh = tmp_path / "restored"
    restored = cli("restore", str(backup_dir), "--data-dir", str(fresh))
    assert restored.returncode == 0, restored.stderr
    kept = batch_ids(fresh / "sightline.db")
    assert before <= kept <= set(acknowledged)  # everything acknowledged before, nothing invented

    again = LiveServer(fresh).start()
    try:
        restored_owner = sign_in(again)
        sites = restored_owner.get("/api/sites").json()["sites"]
        assert {(s["id"], s["key"]) for s in sites} == {(site.id, site.key), (recorder.id, recorder.key)}
        listed = restored_owner.get(f"/api/sites/{recorder.id}/recordings").json()["recordings"]
        assert [r["id"] for r in listed] == [recording]
        assert restored_owner.get(f"/api/recordings/{recording}/events").status_code == 200
        wait_caught_up(restored_owner)
        summary = restored_owner.get(f"/api/sites/{site.id}/reports/summary", params={"range": "7d"}).json()
        assert summary["current"]["pageviews"] == len(kept), summary
        restored_owner.close()
    finally:
        again.stop()
    owner.close()


@pytest.fixture(scope="module")
def made_backup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A backup of a new install, made once: each command is a Python process (about 1 s of CPU)."""
    directory = tmp_path_factory.mktemp("small-backup")
    data = directory / "data"
    assert cli("migrate", "--data-dir", str(data)).returncode == 0
    backup_dir = directory / "backup"
    made = cli("backup", str(backup_dir), "--data-dir", str(data))
    assert made.returncode == 0, made.stderr
    return backup_dir


@pytest.fixture
def small_backup(made_backup: Path, tmp_path: Path) -> Path:
    """A copy of the module's backup of a new install, for the test to damage."""
    return Path(shutil.copytree(made_backup, tmp_path / "backup", symlinks=True))


def refused(backup_dir: Path, target: Path) -> str:
    done = cli("restore", str(backup_dir), "--data-dir", str(target))
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    assert not (target / "sightline.db").exists()
    return done.stderr


def test_restore_refuses_a_damaged_backup_and_names_the_file(small_backup: Path, tmp_path: Path) -> None:
    database = small_backup / "database" / "sightline.db"
    content = bytearray(database.read_bytes())
    content[len(content) // 2] ^= 0xFF
    database.write_bytes(bytes(content))
    message = refused(small_backup, tmp_path / "target")
    assert str(database) in message
    assert "checksum" in message


def test_restore_refuses_a_foreign_or_incomplete_backup(small_backup: Path, tmp_path: Path) -> None:
    extra = small_backup / "recordings" / "planted.json.gz"
    extra.parent.mkdir(parents=True, exist_ok=True)
    extra.write_bytes(b"not ours")
    assert str(extra) in refused(small_backup, tmp_path / "t1")
    extra.unlink()
    manifest = small_backup / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "format": "other-backup"}))
    assert "foreign" in refused(small_backup, tmp_path / "t2")
    manifest.unlink()
    message = refused(small_backup, tmp_path / "t3")
    assert str(manifest) in message
    assert "not a Sightline backup" in message


def test_restore_refuses_a_place_that_already_holds_data(small_backup: Path, tmp_path: Path) -> None:
    occupied = tmp_path / "occupied"
    assert cli("migrate", "--data-dir", str(occupied)).returncode == 0
    done = cli("restore", str(small_backup), "--data-dir", str(occupied))
    assert done.returncode == 1
    assert "already exists" in done.stderr


@pytest.mark.postgres
def test_a_postgresql_service_is_backed_up_with_pg_dump_and_restored_into_an_empty_database(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    source = postgres.create_database()
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    env["SIGHTLINE_OWNER_PASSWORD"] = OWNER_PASSWORD
    owner = [sys.executable, "-m", "sightline.cli", "create-owner", "--email", OWNER_EMAIL]
    subprocess.run([*owner, "--database-url", source, "--data-dir", str(data)], check=True, env=env)
    backup_dir = tmp_path / "backup"
    made = cli("backup", str(backup_dir), "--database-url", source, "--data-dir", str(data))
    assert made.returncode == 0, made.stderr
    assert (backup_dir / "database" / "sightline.pgdump").stat().st_size > 0
    target = postgres.create_database()
    sqlite_target = tmp_path / "elsewhere"
    wrong = cli("restore", str(backup_dir), "--data-dir", str(sqlite_target))
    assert wrong.returncode == 1
    assert "postgresql database" in wrong.stderr
    done = cli("restore", str(backup_dir), "--database-url", target, "--data-dir", str(tmp_path / "new"))
    assert done.returncode == 0, done.stderr
    twice = cli("restore", str(backup_dir), "--database-url", target, "--data-dir", str(tmp_path / "new2"))
    assert twice.returncode == 1
    assert "already has tables" in twice.stderr
    server = LiveServer(tmp_path / "new", target).start()
    try:
        sign_in(server).close()  # the owner came back with the database
    finally:
        server.stop()


def test_recordings_in_a_bucket_are_backed_up_and_restore_into_a_directory_or_another_bucket(
    s3_env: ObjectStore, tmp_path: Path
) -> None:
    url = s3_env.url(s3_env.create_bucket(), "prod")
    server = LiveServer(tmp_path / "data", None, env={**s3_env.env(), "SIGHTLINE_RECORDINGS_URL": url})
    server.start()
    try:
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        recorder = recording_site(owner)
        recording = new_recording_id()
        sent = [page_events(1_700_000_000_000), moves(1_700_000_002_000)]
        for seq, events in enumerate(sent):
            assert post_chunk(server, recorder, recording, seq, chunk(events)).status_code == 202
        owner.close()
        backup_dir = tmp_path / "backup"
        made = cli("backup", str(backup_dir), "--data-dir", str(server.data_dir), "--recordings-url", url)
        assert made.returncode == 0, made.stderr
    finally:
        server.stop()
    manifest = json.loads((backup_dir / "manifest.json").read_text())
    files = next(p["files"] for p in manifest["parts"] if p["name"] == "recordings")
    folder = f"recordings/{recording[:2]}/{recording}"
    assert [f["path"] for f in files] == [f"{folder}/00000000.json.gz", f"{folder}/00000001.json.gz"]

    into_directory = tmp_path / "restored"
    assert cli("restore", str(backup_dir), "--data-dir", str(into_directory)).returncode == 0
    assert _replayed(LiveServer(into_directory), recording) == [e for events in sent for e in events]

    other = s3_env.create_bucket()
    other_url = s3_env.url(other, "copy")
    into_bucket = tmp_path / "restored-s3"
    done = cli("restore", str(backup_dir), "--data-dir", str(into_bucket), "--recordings-url", other_url)
    assert done.returncode == 0, done.stderr
    assert len(s3_env.keys(other, f"copy/{recording[:2]}/{recording}/")) == 2
    env = {**s3_env.env(), "SIGHTLINE_RECORDINGS_URL": other_url}
    assert _replayed(LiveServer(into_bucket, env=env), recording) == [e for events in sent for e in events]
    twice = cli(
        "restore", str(backup_dir), "--data-dir", str(tmp_path / "third"), "--recordings-url", other_url
    )
    assert twice.returncode == 1
    assert f"s3://{other}/copy/ already holds recordings" in twice.stderr


def test_a_backup_whose_bucket_cannot_be_reached_fails_saying_what_to_do(
    s3_env: ObjectStore, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    assert cli("migrate", "--data-dir", str(data)).returncode == 0
    nowhere = f"s3://recordings/prod?endpoint=http://127.0.0.1:{free_port()}"
    backup_dir = tmp_path / "backup"
    done = cli("backup", str(backup_dir), "--data-dir", str(data), "--recordings-url", nowhere)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "could not be reached" in done.stderr
    assert "Check that the object store runs" in done.stderr
    assert not backup_dir.exists() or not any(backup_dir.iterdir())  # no half backup left behind


def _replayed(server: LiveServer, recording: str) -> list[object]:
    server.start()
    try:
        owner = sign_in(server)
        replay = owner.get(f"/api/recordings/{recording}/events")
        assert replay.status_code == 200, replay.text
        owner.close()
        events: list[object] = orjson.loads(replay.content)["events"]
        return events
    finally:
        server.stop()


def test_restore_refuses_a_backup_holding_a_symbolic_link_and_names_it(
    small_backup: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "another-instance.db"
    database = small_backup / "database" / "sightline.db"
    outside.write_bytes(database.read_bytes())  # the same bytes: only the link gives it away
    database.unlink()
    database.symlink_to(outside)
    message = refused(small_backup, tmp_path / "t1")
    assert str(database) in message
    assert "symbolic link" in message
    database.unlink()
    database.write_bytes(outside.read_bytes())
    linked_directory = small_backup / "recordings"
    linked_directory.mkdir(exist_ok=True)
    (linked_directory / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    message = refused(small_backup, tmp_path / "t2")
    assert str(linked_directory / "elsewhere") in message
