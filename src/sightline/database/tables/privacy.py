"""Visitors' data rights and cookieless counting: store tasks, erasures, daily salts.

``store_tasks`` (migration 0013) is how an erasure or a retention cut reaches the analytics
store, which keeps its own copy of the events: the SQL side inserts one row per task, the store
applies it and sets ``done_at``. ``kind`` is ``erase_visitor`` (``visitor_id`` set) or
``prune_before`` (``before`` set: drop the site's events older than it).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
)

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

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

# One secret salt per UTC day ("2026-11-23") for cookieless visitor codes (migration 0013b);
# a row is deleted 48 hours after its day began, after which nobody can recompute that day's codes.
visitor_salts = Table(
    "visitor_salts",
    metadata,
    Column("day", String(10), primary_key=True),
    Column("salt", LargeBinary(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# One row per visitor erasure: who asked, when, what was removed; never the visitor's code.
erasures = Table(
    "erasures",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("requested_by", Integer, ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
    Column("status", String(16), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    Column("events_removed", BigInteger, nullable=False, default=0, server_default="0"),
    Column("recordings_removed", Integer, nullable=False, default=0, server_default="0"),
    Column("responses_removed", Integer, nullable=False, default=0, server_default="0"),
    Column("store_task_id", Integer, nullable=True),  # its store_tasks row (migration 0013c)
)

Index("ix_erasures_site", erasures.c.site_id, erasures.c.id)
