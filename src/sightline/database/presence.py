"""Which Sightline servers are live on a shared PostgreSQL database, and a way for an operator's
command to run only when none is.

Every ``sightline serve`` on PostgreSQL holds a shared advisory lock
(``pg_try_advisory_lock_shared``) on a connection of its own, named after the node
(``application_name``: ``sightline serve HOST:PORT pid N``), for as long as it runs: a node that
is killed, or that loses the database, gives it up with its connection. An operator's command
that must not run beside live nodes (``rebuild-store``, ``restore``) asks for the same lock
exclusively: it gets it only when no node holds it (it then names them, from
``pg_stat_activity``), and while the command holds it a server that starts is refused and says
why. On SQLite there is one node by construction (the data directory is locked): nothing to do.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, text

from sightline.database.engines import Database
from sightline.database.lease import lock_key

KEY = lock_key("live nodes")
_HOLDERS = text(
    "SELECT a.application_name, coalesce(host(a.client_addr), 'local'), a.backend_start "
    "FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.classid::bigint = :hi AND l.objid::bigint = :lo AND l.objsubid = 1 "
    "AND l.granted AND l.pid <> pg_backend_pid() ORDER BY a.backend_start"
)


@dataclass(frozen=True)
class Node:
    name: str  # sightline serve HOST:PORT pid N
    address: str  # as PostgreSQL sees the node's connection
    since: datetime

    def __str__(self) -> str:
        return f"{self.name} (from {self.address}, since {self.since:%Y-%m-%d %H:%M:%S %Z})"


def name_of(what: str) -> str:
    """A process's name as the other nodes see it (PostgreSQL keeps 63 bytes of it)."""
    return f"sightline {what} on {socket.gethostname()} pid {os.getpid()}"[:63]


class Presence:
    def __init__(self, db: Database, name: str) -> None:
        self.db = db
        self.name = name
        self._conn: Connection | None = None

    @property
    def shared(self) -> bool:
        return self.db.dialect != "sqlite"

    def _ask(self, function: str) -> bool:
        conn = self.db.engine.connect()
        try:
            conn.execute(text("SELECT set_config('application_name', :name, false)"), {"name": self.name})
            got = bool(conn.execute(text(f"SELECT {function}(:key)"), {"key": KEY}).scalar())
            conn.commit()  # the lock is the session's; no transaction stays open
        except Exception:
            conn.invalidate()
            conn.close()
            raise
        if not got:
            conn.invalidate()  # never back to the pool under this name
            conn.close()
            return False
        self._conn = conn
        return True

    def join(self) -> bool:
        """This server is live (until ``release``); False while an operator's command runs."""
        return not self.shared or self._ask("pg_try_advisory_lock_shared")

    def alone(self) -> list[Node]:
        """For an operator's command: the live nodes, if any (then it must not run); when none,
        it holds the lock until ``release`` and no server starts meanwhile."""
        if not self.shared or self._ask("pg_try_advisory_lock"):
            return []
        return self.nodes()

    def nodes(self) -> list[Node]:
        """The other processes holding the lock (live servers, or an operator's command)."""
        unsigned = KEY & 0xFFFFFFFFFFFFFFFF
        with self.db.engine.connect() as conn:
            rows = conn.execute(_HOLDERS, {"hi": unsigned >> 32, "lo": unsigned & 0xFFFFFFFF}).all()
        return [Node(str(name), str(address), since) for name, address, since in rows]

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.invalidate()  # the lock goes with the connection
                conn.close()
