"""Imported history as a feature: the import jobs, resumed at start and stopped between batches."""

from __future__ import annotations

from sightline.features import Feature, Job
from sightline.imports import jobs
from sightline.imports.jobs import Importer


def feature(importer: Importer) -> Feature:
    return Feature(
        "imports", jobs=[Job("imports", lambda: jobs.running(importer))], settings=["import_max_mb"]
    )
