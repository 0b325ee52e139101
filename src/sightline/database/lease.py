"""A lease on a job for one node of several: exactly one node holds it, another takes over when
the holder dies.

On PostgreSQL it is a session-level advisory lock (``pg_try_advisory_lock``) held by a connection
of its own: the lock lasts as long as that connection, so a node that is killed, or that loses
the database, gives it up at once, and the next node that asks gets it. On SQLite there is one
node by construction (the data directory is locked), so the lease is always held.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging

from sqlalchemy import Connection, text

from sightline.database.engines import Database

log = logging.getLogger("sightline.database")


def lock_key(name: str) -> int:
    """A stable signed 64-bit key for the lock's name (PostgreSQL's advisory keys are bigint)."""
    return int.from_bytes(hashlib.sha256(f"sightline:{name}".encode()).digest()[:8], "big", signed=True)


class Lease:
    def __init__(self, db: Database, name: str) -> None:
        self.db = db
        self.name = name
        self.key = lock_key(name)
        self._conn: Connection | None = None

    @property
    def shared(self) -> bool:
        """Whether several nodes may ask for it (a database other nodes can reach)."""
        return self.db.dialect != "sqlite"

    def held(self) -> bool:
        """True while this node holds the lease; asks for it when it does not (never waits)."""
        if not self.shared:
            return True
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT 1"))
                self._conn.rollback()  # no transaction stays open between two looks
                return True
            except Exception:
                log.warning("the lease %r was lost with its database connection", self.name)
                self._drop()
                return False
        conn = self.db.engine.connect()
        try:
            got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}).scalar())
            conn.commit()  # the lock is the session's; the transaction need not stay open
        except Exception:
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self._conn = conn
        log.info("this node now runs %s", self.name)
        return True

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.invalidate()  # never back to the pool: the lock dies with the connection
                conn.close()

    def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": self.key})
                self._conn.commit()
        self._drop()
