"""The probe registry and the overall status it derives."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sightline.database import Database
from sightline.database.outage import CAUSES, cause_of
from sightline.database.reclaim import advice, free_pages

log = logging.getLogger(__name__)

OK, DEGRADED, DOWN = "ok", "degraded", "down"
_RANK = {OK: 0, DEGRADED: 1, DOWN: 2}


@dataclass
class ServiceReport:
    status: str
    figures: dict[str, Any] = field(default_factory=dict)


Probe = Callable[[], ServiceReport]


class HealthRegistry:
    def __init__(self) -> None:
        self._probes: dict[str, tuple[Probe, bool]] = {}

    def register(self, name: str, probe: Probe, *, critical: bool = False) -> None:
        """Add a service; a critical one that is down makes the whole service down."""
        self._probes[name] = (probe, critical)

    def names(self) -> list[str]:
        return list(self._probes)

    def service(self, name: str) -> dict[str, Any] | None:
        """One service's report (``status`` and its figures), or None when nothing registered it."""
        entry = self._probes.get(name)
        if entry is None:
            return None
        try:
            result = entry[0]()
        except Exception:
            log.exception("health probe %s failed", name)
            return {"status": DOWN, "error": "probe_failed"}
        return {"status": result.status, **result.figures}

    def report(self, version: str) -> dict[str, Any]:
        services: dict[str, Any] = {}
        overall = OK
        for name, (probe, critical) in self._probes.items():
            started = time.perf_counter()
            try:
                result = probe()
            except Exception as exc:
                cause = cause_of(exc)
                if cause is None:
                    log.exception("health probe %s failed", name)
                    result = ServiceReport(DOWN, {"error": "probe_failed"})
                else:  # the database probe reports the outage itself, once
                    result = ServiceReport(
                        DOWN,
                        {
                            "error": "database_unavailable",
                            "problem": f"This part needs the database, which is unavailable: {cause.problem}",
                            "fix": cause.fix,
                        },
                    )
            latency = round((time.perf_counter() - started) * 1000, 3)
            services[name] = {"status": result.status, "latency_ms": latency, **result.figures}
            effect = result.status if critical or result.status != DOWN else DEGRADED
            if _RANK[effect] > _RANK[overall]:
                overall = effect
        return {
            "status": overall,
            "services": services,
            "version": version,
            "checked_at": datetime.now(UTC).isoformat(),
        }


def database_probe(db: Database) -> Probe:
    """Reachable (one round trip) and writable (SQLite: the write lock can be taken), in plain words;
    on SQLite also the file's size and free pages (``space``), with ``advice`` when a large share is
    free and only ``sightline compact`` can give it back."""

    def down(exc: Exception, figures: dict[str, Any]) -> ServiceReport:
        cause = db.note_outage(exc) or CAUSES["unreachable"]
        recent = db.outages.recent()
        since = recent[1] if recent else time.time()
        return ServiceReport(
            DOWN,
            {
                **figures,
                "error": cause.kind,
                "problem": cause.problem,
                "fix": cause.fix,
                "failing_since": datetime.fromtimestamp(since, UTC).isoformat(),
            },
        )

    def probe() -> ServiceReport:
        figures: dict[str, Any] = {"engine": db.dialect}
        try:
            latency = db.ping()
        except Exception as exc:
            return down(exc, {**figures, "reachable": False, "writable": False})
        figures.update(round_trip_ms=round(latency, 3), reachable=True)
        try:
            db.write_check()
        except Exception as exc:
            return down(exc, {**figures, "writable": False})
        figures["writable"] = True
        if (space := free_pages(db)) is not None:  # SQLite: how much of the file is free pages
            figures.update(space=space.as_dict(), advice=advice(space))
        recent = db.outages.recent()
        if recent is not None and db.dialect != "sqlite" and recent[0].kind != "unreachable":
            cause, since = recent  # PostgreSQL refused a write lately (disk full, read-only)
            return ServiceReport(
                DEGRADED,
                {
                    **figures,
                    "problem": cause.problem,
                    "fix": cause.fix,
                    "failing_since": datetime.fromtimestamp(since, UTC).isoformat(),
                },
            )
        db.outages.clear()
        status = OK if latency < 500 else DEGRADED
        problem = None if status == OK else "The database answers slowly."
        fix = None if status == OK else "Check the database server's load and the disk it writes to."
        return ServiceReport(status, {**figures, "problem": problem, "fix": fix, "failing_since": None})

    return probe
