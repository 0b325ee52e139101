"""Visitors' data rights: the analytics store's share of erasures and retention cuts.

``store_tasks`` (migration 0013) is how an erasure or a retention cut reaches the analytics
store, which keeps its own copy of the events: the SQL side inserts one row per task, the store
applies it and sets ``done_at``. ``kind`` is ``erase_visitor`` (``visitor_id`` set) or
``prune_before`` (``before`` set: drop the site's events older than it).
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, Integer, String, Table

from sightline.storage.metadata import metadata
from sightline.storage.types import UTCDateTime

ERASE_VISITOR = "erase_visitor"
PRUNE_BEFORE = "prune_before"

store_tasks = Table(
    "store_tasks",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("visitor_id", String(200), nullable=True),
    Column("before", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("done_at", UTCDateTime, nullable=True),
    CheckConstraint("kind IN ('erase_visitor', 'prune_before')", name="ck_store_tasks_kind"),
)

Index("ix_store_tasks_pending", store_tasks.c.done_at, store_tasks.c.id)
