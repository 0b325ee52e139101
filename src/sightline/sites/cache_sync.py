"""The site-key caches of several servers on one PostgreSQL, emptied together (LISTEN/NOTIFY).

A change to ``sites`` sends ``NOTIFY sightline_sites`` inside its own transaction, so PostgreSQL
delivers it on commit only. Every server listens on a connection of its own (a daemon thread) and
empties its cache when a notification arrives; after a lost connection it empties the cache too
(notifications sent meanwhile are lost) and listens again. Without this, another node would
answer from its cache for up to its lifetime (5 s). SQLite has one server per data directory and
needs none of this.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy.engine import make_url

log = logging.getLogger("sightline.sites")

CHANNEL = "sightline_sites"
NOTIFY = f"NOTIFY {CHANNEL}"
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)


def libpq_url(sqlalchemy_url: str) -> str:
    return make_url(sqlalchemy_url).set(drivername="postgresql").render_as_string(hide_password=False)


class ChangeListener:
    """Calls ``on_change`` for every change to ``sites`` committed by any server on the database."""

    def __init__(self, database_url: str, on_change: Callable[[], None]) -> None:
        self.url = libpq_url(database_url)
        self.on_change = on_change
        self._stop = threading.Event()
        self.listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sites-listen", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psycopg  # only with PostgreSQL: a server on SQLite never loads it

        failures = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.on_change()  # anything may have changed while we were not listening
                    self.listening.set()
                    failures = 0
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=1.0):
                            self.on_change()
            except Exception as exc:
                self.listening.clear()
                if self._stop.is_set():
                    return
                pause = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                failures += 1
                log.warning("sites: listening for site changes failed (%s); again in %.1f s", exc, pause)
                self._stop.wait(pause)
