"""Visitors' data rights as a feature: the event and survey-response retention job and its probe."""

from __future__ import annotations

from sightline.features import Feature, HealthProbe, Job
from sightline.visitors.retention import Retention


def feature(retention: Retention) -> Feature:
    return Feature(
        "visitors",
        probes=[HealthProbe("retention", retention.probe)],
        jobs=[Job.periodic(retention.periodic)],
        settings=["event_retention_days"],
    )
