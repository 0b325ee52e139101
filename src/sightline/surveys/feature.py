"""Surveys as a feature: the metrics of the widget's responses (``counts``, kept by ingest's paths)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sightline.features import Feature
from sightline.metrics.collectors import SURVEYS_SPEC, FiguresCollector


def feature(counts: Counter[str]) -> Feature:
    return Feature("surveys", collectors=[FiguresCollector(lambda: metric_figures(counts), SURVEYS_SPEC)])


def metric_figures(counts: Counter[str]) -> dict[str, Any]:
    refused = {k.partition(":")[2]: v for k, v in counts.items() if k.startswith("refused:")}
    return {"stored": counts["stored"], "duplicate": counts["duplicate"], "refused": refused}
