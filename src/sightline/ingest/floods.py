"""Floods: one client address sending one site more batches a minute than people do.

``FloodWatch`` counts batches per (site, client address) in the current minute, in memory only:
the addresses are dropped with the minute's counts and never written anywhere. A batch beyond
``--ingest-flood-batches-per-minute`` is a flood: counted, shown in health with the sites it hit,
and dropped (202, nothing stored) when the operator turns ``--ingest-drop-floods`` on. A person
sends a batch every few seconds at most; a busy office behind one address stays far below the
default of 600 a minute.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

MAX_TRACKED = 200_000  # (site, address) pairs counted in one minute; more are not tracked
RECENT_SECONDS = 3600  # health's advice speaks of floods seen this recently


class FloodWatch:
    def __init__(self, per_minute: int, drop: bool, clock: Callable[[], float] = time.time) -> None:
        self.per_minute = per_minute
        self.drop = drop
        self.clock = clock
        self._minute = -1
        self._counts: dict[tuple[int, str], int] = {}
        self.batches_over = 0
        self.sites: Counter[str] = Counter()  # site domain -> batches over the threshold
        self.last_at: float | None = None

    def over(self, site_id: int, domain: str, address: str | None) -> bool:
        """Count one batch; whether it is over the threshold (a flood)."""
        if address is None:
            return False
        now = self.clock()
        minute = int(now // 60)
        if minute != self._minute:
            self._minute = minute
            self._counts = {}
        key = (site_id, address)
        count = self._counts.get(key)
        if count is None:
            if len(self._counts) >= MAX_TRACKED:
                return False
            count = 0
        count += 1
        self._counts[key] = count
        if count <= self.per_minute:
            return False
        self.batches_over += 1
        self.sites[domain] += 1
        self.last_at = now
        return True

    def report(self) -> dict[str, object]:
        """Health's figures: the threshold, whether floods are dropped, what was seen."""
        last = None if self.last_at is None else datetime.fromtimestamp(self.last_at, UTC).isoformat()
        return {
            "threshold_per_minute": self.per_minute,
            "dropping": self.drop,
            "batches_over": self.batches_over,
            "last_at": last,
            "sites": [domain for domain, _ in self.sites.most_common(10)],
        }

    def advice(self) -> str | None:
        """A sentence for health while floods were seen in the last hour and are not dropped."""
        if self.last_at is None or self.drop or self.clock() - self.last_at > RECENT_SECONDS:
            return None
        hit = ", ".join(domain for domain, _ in self.sites.most_common(3))
        return (
            f"{self.batches_over:,} batches came faster than {self.per_minute:,} a minute from one "
            f"address to one site ({hit}) and were stored. If this is not real traffic, start the "
            "server with --ingest-drop-floods to drop such batches."
        )
