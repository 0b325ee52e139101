"""Service health: each part of Sightline registers a probe; ``GET /api/health`` and ``/healthz`` read them.

May import: ``sightline.database``. Each feature brings its own probes (ingest queue depth,
recordings disk use) as a ``sightline.features.Feature``, registered at start-up; this package knows
none of them.
"""

from sightline.health.registry import HealthRegistry, ServiceReport

__all__ = ["HealthRegistry", "ServiceReport"]
