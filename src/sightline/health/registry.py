"""The probe registry and the overall status it derives."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sightline.storage import Database

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
            except Exception:
                log.exception("health probe %s failed", name)
                result = ServiceReport(DOWN, {"error": "probe_failed"})
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
    def probe() -> ServiceReport:
        try:
            latency = db.ping()
        except Exception:
            log.exception("database health check failed")
            return ServiceReport(DOWN, {"error": "unreachable", "engine": db.dialect})
        status = OK if latency < 500 else DEGRADED
        return ServiceReport(status, {"engine": db.dialect, "round_trip_ms": round(latency, 3)})

    return probe
