"""Which published surveys of a site open by themselves (``auto_open`` in their published
revision), for ``/i/config``: the SDK opens each after its delay on a targeted page, through the
same path as ``analytics.feedback(id)`` (targeting, earlier answers and privacy checked there).

Read once per site per ``TTL`` seconds at most: ``/i/config`` is asked on every page load.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import orjson
from sqlalchemy import Connection, and_, select

from sightline.database import Database
from sightline.database.tables.surveys import survey_revisions, surveys

TTL = 10.0


def auto_open_surveys(conn: Connection, site_id: int) -> list[dict[str, int]]:
    """``[{"id", "delay_seconds"}]`` of the site's published, unarchived surveys that auto-open."""
    query = (
        select(surveys.c.id, survey_revisions.c.definition)
        .join(
            survey_revisions,
            and_(
                survey_revisions.c.survey_id == surveys.c.id,
                survey_revisions.c.revision == surveys.c.published_revision,
            ),
        )
        .where(surveys.c.site_id == site_id, surveys.c.archived_at.is_(None))
        .order_by(surveys.c.id)
    )
    found = []
    for survey_id, text in conn.execute(query):
        auto: Any = orjson.loads(text).get("auto_open")
        if isinstance(auto, dict):
            found.append({"id": int(survey_id), "delay_seconds": int(auto.get("delay_seconds", 0))})
    return found


class AutoOpen:
    """The answer of ``auto_open_surveys`` per site, kept ``ttl`` seconds (a publish, an archive or
    a change shows within that time on every node). ``get`` answers from memory or None; ``load``
    reads the database (call it off the event loop)."""

    def __init__(self, db: Database, ttl: float = TTL) -> None:
        self.db = db
        self.ttl = ttl
        self._lock = threading.Lock()
        self._kept: dict[int, tuple[float, list[dict[str, int]]]] = {}

    def get(self, site_id: int) -> list[dict[str, int]] | None:
        with self._lock:
            kept = self._kept.get(site_id)
        return kept[1] if kept is not None and time.monotonic() - kept[0] < self.ttl else None

    def load(self, site_id: int) -> list[dict[str, int]]:
        with self.db.read() as conn:
            found = auto_open_surveys(conn, site_id)
        self.put(site_id, found)
        return found

    def put(self, site_id: int, found: list[dict[str, int]]) -> None:
        with self._lock:
            if len(self._kept) > 10_000:
                self._kept.clear()
            self._kept[site_id] = (time.monotonic(), found)
