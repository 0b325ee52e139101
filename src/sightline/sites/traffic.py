"""Accepted traffic keeps a site's ``first_event_at`` and ``last_event_at`` current; its
connection state derives from them (``sites.service.connection_state``).

Not one write per event: ingest calls ``touch`` inside its group-commit transaction with the sites
that had events in the group, and a site is written at most once per ``TOUCH_INTERVAL`` seconds
(the first accepted event of a site in this process is always written). The update is part of
the same transaction as the events, so the state never claims traffic that was not stored.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import Connection, bindparam, func, update

from sightline.database.schema import sites
from sightline.sites.lookup import SKIP_INVALIDATION

TOUCH_INTERVAL = 1.0

_TOUCH = (
    update(sites)
    .where(sites.c.id == bindparam("site"))
    .values(
        first_event_at=func.coalesce(
            sites.c.first_event_at, bindparam("now", type_=sites.c.last_event_at.type)
        ),
        last_event_at=bindparam("now", type_=sites.c.last_event_at.type),
    )
    .execution_options(**{SKIP_INVALIDATION: True})
)


class TrafficMarker:
    """Remembers when each site was last written, so a busy site costs one UPDATE per interval."""

    def __init__(self, interval: float = TOUCH_INTERVAL) -> None:
        self.interval = interval
        self._written: dict[int, float] = {}

    def due(self, site_ids: Iterable[int]) -> list[int]:
        now = time.monotonic()
        return [s for s in set(site_ids) if now - self._written.get(s, -1e18) >= self.interval]

    def touch(self, conn: Connection, site_ids: list[int], now: datetime) -> None:
        """Set ``last_event_at = now`` for ``site_ids`` in the caller's transaction."""
        if site_ids:
            conn.execute(_TOUCH, [{"site": s, "now": now} for s in sorted(site_ids)])

    def written(self, site_ids: Iterable[int]) -> None:
        """Call after the transaction that touched ``site_ids`` committed."""
        now = time.monotonic()
        for site in site_ids:
            self._written[site] = now
