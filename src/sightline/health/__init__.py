"""Service health: each part of Sightline registers a probe; ``GET /api/health`` and ``/healthz`` read them.

May import: ``sightline.database``. Feature modules register their own probes (ingest queue depth,
recordings disk use) at start-up; this package knows none of them.
"""

from sightline.health.registry import HealthRegistry, ServiceReport

__all__ = ["HealthRegistry", "ServiceReport"]
