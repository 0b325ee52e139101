"""The parts of a backup, each able to copy itself out of a running service and back in.

``PARTS`` is the list ``sightline backup`` walks; a part names its directory inside the backup.
The embedded analytics store is a part too: with ``--event-log-retention-days`` it is the only
copy of the events the log has trimmed. It is copied first, so its watermark is never ahead of
the database's log (the server feeds the rest after a restore). A ClickHouse store is backed up
with ClickHouse's own tools (docs/operations.md).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sqlalchemy import inspect, text
from sqlalchemy.engine import URL, make_url

from sightline.backup.manifest import BackupError
from sightline.database.engines import Database, normalise_url
from sightline.recordings.store import (
    CHUNK_NAME,
    RECORDING_ID,
    ChunkMissingError,
    ChunkStore,
    StorageUnavailableError,
    chunk_name,
    open_store,
)
from sightline.settings import Settings
from sightline.store import snapshot


@dataclass
class Place:
    """Where a service keeps its data: the data directory and the database."""

    data_dir: Path
    database_url: str
    events_url: str | None = None  # the analytics store's ClickHouse, None: embedded
    recordings_url: str | None = None  # None: DATA_DIR/recordings

    @classmethod
    def of(cls, settings: Settings) -> Place:
        return cls(
            settings.data_path,
            normalise_url(settings.effective_database_url),
            settings.events_url or None,
            settings.recordings_url or None,
        )

    def recordings(self) -> ChunkStore:
        return open_store(self.recordings_url, self.data_dir)

    @property
    def url(self) -> URL:
        return make_url(self.database_url)

    @property
    def engine(self) -> str:
        return self.url.get_backend_name()

    @property
    def sqlite_file(self) -> Path:
        name = self.url.database
        if not name or name == ":memory:":
            raise BackupError("an in-memory SQLite database cannot be backed up or restored")
        return Path(name).resolve()


class Part(Protocol):
    name: str
    # A backup made before this part existed may lack it (restore then does without it).
    required: bool

    def dump(self, place: Place, target: Path) -> list[Path]:
        """Copy this part of a running service into ``target`` (empty); the files written."""
        ...

    def occupied(self, place: Place) -> str | None:
        """What already holds data where this part would be restored (None: nothing)."""
        ...

    def check(self, place: Place, source: Path, engine: str) -> None:
        """Raises ``BackupError`` when this part of the backup cannot go to ``place`` (before any
        part is restored, so a refused restore leaves nothing behind)."""
        ...

    def restore(self, place: Place, source: Path, engine: str) -> None:
        """Put the part back from ``source`` (verified and checked) into an empty place."""
        ...


def libpq_env(url: URL) -> dict[str, str]:
    """The connection as libpq's environment variables: no password on a command line."""
    env = dict(os.environ)
    pairs = {
        "PGHOST": url.host,
        "PGPORT": str(url.port) if url.port else None,
        "PGUSER": url.username,
        "PGPASSWORD": url.password,
        "PGDATABASE": url.database,
    }
    env.update({k: str(v) for k, v in pairs.items() if v})
    return env


def _run(command: list[str], env: dict[str, str], what: str) -> None:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=6 * 3600)
    except FileNotFoundError:
        raise BackupError(
            f"{command[0]} is not installed; install PostgreSQL's client (Debian: postgresql-client)"
        ) from None
    if done.returncode != 0:
        raise BackupError(f"{what} failed: {done.stderr.strip()[-2000:]}")


class DatabasePart:
    """The database: SQLite's online backup API (a consistent copy while writers go on) or
    ``pg_dump`` (one snapshot transaction) in its custom format."""

    name = "database"
    required = True
    SQLITE = "sightline.db"
    PGDUMP = "sightline.pgdump"

    def dump(self, place: Place, target: Path) -> list[Path]:
        target.mkdir(parents=True)
        if place.engine == "sqlite":
            copy = target / self.SQLITE
            source = sqlite3.connect(f"file:{place.sqlite_file}?mode=ro", uri=True)
            destination = sqlite3.connect(copy)
            try:
                source.execute("PRAGMA busy_timeout=10000")
                source.backup(destination, pages=4096)
                destination.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            finally:
                destination.close()
                source.close()
            return [copy]
        dump = target / self.PGDUMP
        command = ["pg_dump", "--format=custom", "--no-owner", "--no-privileges", "--file", str(dump)]
        _run(command, libpq_env(place.url), "pg_dump")
        return [dump]

    def revisions(self, place: Place, dumped: Path) -> list[str]:
        """The schema revisions of what was dumped."""
        url = f"sqlite:///{dumped / self.SQLITE}" if place.engine == "sqlite" else place.database_url
        db = Database(url)
        try:
            with db.read() as conn:
                return sorted(
                    str(r[0]) for r in conn.execute(text("SELECT version_num FROM alembic_version"))
                )
        finally:
            db.dispose()

    def occupied(self, place: Place) -> str | None:
        if place.engine == "sqlite":
            path = place.sqlite_file
            return f"{path} already exists" if path.exists() and path.stat().st_size > 0 else None
        db = Database(place.database_url)
        try:
            with db.read() as conn:
                tables = inspect(conn).get_table_names()
        finally:
            db.dispose()
        return (
            f"the database {place.url.database} already has tables ({', '.join(tables[:3])}...)"
            if tables
            else None
        )

    def check(self, place: Place, source: Path, engine: str) -> None:
        if engine != place.engine:
            hint = "--data-dir (SQLite)" if engine == "sqlite" else "--database-url postgresql://..."
            raise BackupError(f"{source}: this backup holds a {engine} database; restore it with {hint}")

    def restore(self, place: Place, source: Path, engine: str) -> None:
        if engine == "sqlite":
            path = place.sqlite_file
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(path.name + ".restoring")
            shutil.copyfile(source / self.SQLITE, temporary)
            with temporary.open("rb") as handle:
                os.fsync(handle.fileno())
            temporary.replace(path)
            return
        command = ["pg_restore", "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"]
        env = libpq_env(place.url)
        _run([*command, "--dbname", env.get("PGDATABASE", ""), str(source / self.PGDUMP)], env, "pg_restore")


class RecordingsPart:
    """Every recording chunk, from the store ``--recordings-url`` names (a directory or an
    S3-compatible bucket), as ``<id[:2]>/<id>/<seq>.json.gz`` files whichever store it came from,
    so a backup restores into either. Chunks are written once (a directory's through a temporary
    file and a rename, a bucket's as whole objects), so every chunk copied is whole; they are
    copied after the database, so every chunk the copied index names is in the backup."""

    name = "recordings"
    required = True

    def dump(self, place: Place, target: Path) -> list[Path]:
        target.mkdir(parents=True)
        store = place.recordings()
        written: list[Path] = []
        with _unavailable():
            for recording_id in store.recording_ids():
                for seq in store.seqs(recording_id):
                    try:
                        data = store.get(recording_id, seq)
                    except ChunkMissingError:  # deleted (retention) while we walked
                        continue
                    copy = target / recording_id[:2] / recording_id / chunk_name(seq)
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    copy.write_bytes(data)
                    written.append(copy)
        return written

    def occupied(self, place: Place) -> str | None:
        store = place.recordings()
        with _unavailable():
            if next(iter(store.recording_ids()), None) is not None:
                return f"{store.location} already holds recordings"
        return None

    def check(self, place: Place, source: Path, engine: str) -> None:
        for path in _chunk_files(source):
            if not _chunk_address(source, path):
                raise BackupError(f"{path}: not a recording chunk (<id[:2]>/<id>/<seq>.json.gz)")
        store = place.recordings()
        if store.kind != "directory":  # a directory is made when the first chunk goes back
            with _unavailable():
                store.check()

    def restore(self, place: Place, source: Path, engine: str) -> None:
        store = place.recordings()
        with _unavailable():
            for path in _chunk_files(source):
                address = _chunk_address(source, path)
                if address is not None:
                    store.put(address[0], address[1], path.read_bytes())


def _chunk_files(source: Path) -> list[Path]:
    return sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else []


def _chunk_address(source: Path, path: Path) -> tuple[str, int] | None:
    parts = path.relative_to(source).parts
    if len(parts) != 3 or not RECORDING_ID.match(parts[1]) or parts[0] != parts[1][:2]:
        return None
    match = CHUNK_NAME.match(parts[2])
    return (parts[1], int(match.group(1))) if match else None


@contextmanager
def _unavailable() -> Iterator[None]:
    """The recordings storage's problem and fix as a ``BackupError``."""
    try:
        yield
    except StorageUnavailableError as error:
        raise BackupError(f"{error.problem} {error.fix}") from None


class StorePart:
    """The embedded analytics store as Parquet files (``sightline.store.snapshot``); the running
    server's store process writes them from one snapshot."""

    name = "store"
    required = False  # backups made before it: the store is rebuilt from the log

    def dump(self, place: Place, target: Path) -> list[Path]:
        target.mkdir(parents=True)
        if place.events_url:
            return []
        try:
            return snapshot.export(place.data_dir, target)
        except snapshot.SnapshotError as error:
            raise BackupError(str(error)) from error

    def occupied(self, place: Place) -> str | None:
        return None if place.events_url else snapshot.occupied(place.data_dir)

    def check(self, place: Place, source: Path, engine: str) -> None:
        if place.events_url or not source.is_dir():
            return
        try:
            snapshot.check(source)
        except snapshot.SnapshotError as error:
            raise BackupError(str(error)) from error

    def restore(self, place: Place, source: Path, engine: str) -> None:
        if not place.events_url and source.is_dir():
            snapshot.restore(place.data_dir, source)


PARTS: list[Part] = [StorePart(), DatabasePart(), RecordingsPart()]
