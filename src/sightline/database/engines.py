"""Engines for SQLite (default, WAL) and PostgreSQL (psycopg 3), and applying migrations."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url

from sightline import __version__
from sightline.database.outage import Cause, OutageLog, cause_of

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("sightline.database")

MIGRATIONS = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS = 10_000
# A WAL that grew past this (a large deletion, a VACUUM) is cut back to it at its next reset; the
# ingest writer checkpoints at 40 MiB (ingest/checkpoint.py), so steady work never reaches it.
WAL_SIZE_LIMIT = 64 * 1024 * 1024
WRITE_CHECK_TIMEOUT_MS = 300


def normalise_url(url: str) -> str:
    """Map the URLs users write to the drivers Sightline ships: psycopg 3 for PostgreSQL."""
    parsed = make_url(url)
    if parsed.drivername in {"postgres", "postgresql"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    if cursor.execute("PRAGMA page_count").fetchone()[0] == 0:
        # A new database, before WAL and its first table: only a database created so keeps the
        # pointer maps that let the store give deleted events' pages back to the file system
        # (database/reclaim.py). An existing one needs `sightline compact` (a VACUUM). Not set on
        # every connection: on an incremental database the pragma is a write transaction.
        cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is on disk before the request that made it is answered.
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    cursor.close()


def known_revisions() -> set[str]:
    """Every migration revision this Sightline has."""
    from alembic.config import Config  # alembic loads only where the schema is handled
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return {script.revision for script in ScriptDirectory.from_config(cfg).walk_revisions()}


class SchemaTooNewError(RuntimeError):
    """The database was migrated by a newer Sightline than this one."""


class Database:
    """One engine plus the helpers every feature module uses."""

    def __init__(self, url: str) -> None:
        self.url = normalise_url(url)
        parsed = make_url(self.url)
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = create_engine(
                self.url, pool_size=8, max_overflow=8, connect_args={"check_same_thread": False}
            )
            event.listen(self.engine, "connect", _sqlite_pragmas)
        else:
            self.engine = create_engine(
                self.url,
                pool_size=8,
                max_overflow=8,
                pool_pre_ping=True,
                pool_timeout=10,
                connect_args={"connect_timeout": 5},
            )
        self.outages = OutageLog()

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """A connection inside one transaction, committed on success."""
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    def ping(self) -> float:
        """One round trip to the database; returns its latency in milliseconds."""
        started = time.perf_counter()
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1")).scalar_one()
        return (time.perf_counter() - started) * 1000

    def write_check(self) -> None:
        """Raise when nothing could be written now (SQLite: another writer holds the lock).

        SQLite takes the write lock (``BEGIN IMMEDIATE``) with a short busy timeout and gives it back
        at once; PostgreSQL has no database-wide write lock, so a reachable server passes.
        """
        if self.dialect != "sqlite":
            return
        raw = self.engine.raw_connection()
        try:
            cursor = raw.driver_connection.cursor()  # type: ignore[union-attr]
            cursor.execute(f"PRAGMA busy_timeout={WRITE_CHECK_TIMEOUT_MS}")
            try:
                if raw.driver_connection.in_transaction:  # type: ignore[union-attr]
                    raw.driver_connection.rollback()  # type: ignore[union-attr]
                cursor.execute("BEGIN IMMEDIATE")
                cursor.execute("ROLLBACK")
            finally:
                cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                cursor.close()
        finally:
            raw.close()

    def note_outage(self, exc: BaseException) -> Cause | None:
        """Classify ``exc``; an outage is recorded for health and logged once (no traceback)."""
        cause = cause_of(exc)
        if cause is not None and self.outages.note(cause):
            log.warning("database unavailable (%s): %s", cause.kind, cause.problem)
        return cause

    def alembic_config(self) -> Config:
        from alembic.config import Config  # only where the schema is handled (not the store process)

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        cfg.set_main_option("sqlalchemy.url", self.url.replace("%", "%%"))
        return cfg

    def migrate(self) -> None:
        """Bring the schema to the newest migration of every branch (run at every start).

        Each feature starts its own branch from 0001, so features add tables independently.
        """
        with self.engine.begin() as conn:
            cfg = self.alembic_config()
            cfg.attributes["connection"] = conn
            self.refuse_unknown_schema(conn, cfg)
            from alembic import command

            command.upgrade(cfg, "heads")

    def refuse_unknown_schema(self, conn: Connection, cfg: Config) -> None:
        """SchemaTooNewError when the database was migrated by a newer Sightline: running on a
        schema it does not know could lose or corrupt what the newer version stores."""
        if not inspect(conn).has_table("alembic_version"):
            return
        current = {str(row[0]) for row in conn.execute(text("SELECT version_num FROM alembic_version"))}
        unknown = sorted(current - known_revisions())
        if unknown:
            raise SchemaTooNewError(
                f"the database schema is at revision {', '.join(unknown)}, which this Sightline "
                f"({__version__}) does not know: a newer version migrated it. Run that version (or "
                "newer), or restore a backup made before the upgrade; Sightline does not start on "
                "a schema newer than it knows."
            )

    def current_revision(self) -> str | None:
        with self.engine.connect() as conn:
            try:
                row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
            except Exception:
                return None
        return None if row is None else str(row[0])

    def dispose(self) -> None:
        self.engine.dispose()


def open_database(url: str, *, migrate: bool = True) -> Database:
    db = Database(url)
    if migrate:
        db.migrate()
    return db
