"""The reports as a feature: the overview's days read once the server has started (``warm``)."""

from __future__ import annotations

from sightline.database import Database
from sightline.features import Feature, Job
from sightline.reports.warm import Warmer
from sightline.store.client import StoreClient


def feature(store: StoreClient, db: Database) -> Feature:
    warmer = Warmer(store, db, store.wait_ready, busy=lambda: store.asking > 0)
    return Feature("reports", jobs=[Job("overview's days", warmer.running)])
