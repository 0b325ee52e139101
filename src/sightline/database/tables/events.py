"""Events received from the SDK, and the batch ids that make retried batches idempotent.

``events`` is the raw table reports read: one lean row per event, indexed by (site_id, time).
``event_batches`` holds one row per stored batch; its primary key (site_id, batch_id) is what
stores a retried batch once. Old batch rows are pruned by the ingest writer.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
)

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

# SQLite only auto-increments an INTEGER PRIMARY KEY (the rowid); PostgreSQL gets a 64-bit key.
# An event's id is its position in the log, which the analytics store reads after its watermark:
# it is never handed out twice, whatever is deleted. PostgreSQL's sequence never goes back; on
# SQLite AUTOINCREMENT keeps the largest id ever given (``sqlite_sequence``), where a plain rowid
# would give the ids of deleted newest rows again (migration 0018).
EventId = BigInteger().with_variant(Integer, "sqlite")

events = Table(
    "events",
    metadata,
    Column("id", EventId, primary_key=True, autoincrement=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("time", UTCDateTime, nullable=False),
    Column("visitor_id", String(200), nullable=False),
    Column("session_id", String(64), nullable=False),
    Column("name", String(100), nullable=False),
    Column("path", String(2000), nullable=False),
    Column("referrer_source", String(255), nullable=True),
    Column("referrer", String(2000), nullable=True),
    Column("utm_source", String(200), nullable=True),
    Column("utm_medium", String(200), nullable=True),
    Column("utm_campaign", String(200), nullable=True),
    Column("utm_term", String(200), nullable=True),
    Column("utm_content", String(200), nullable=True),
    Column("browser", String(100), nullable=True),
    Column("os", String(100), nullable=True),
    Column("device_type", String(16), nullable=True),
    Column("screen_class", String(16), nullable=True),
    Column("props", Text, nullable=True),
    Column("batch_id", String(64), nullable=False),
    # Where the client was (``sightline.geo``, migration 0013); the address itself is never kept.
    Column("country", String(2), nullable=True),  # ISO 3166-1 alpha-2
    Column("region", String(100), nullable=True),
    Column("city", String(100), nullable=True),
    # The visitor's language, its primary subtag only (``ingest.sources.language``, migration 0023).
    Column("language", String(8), nullable=True),
    sqlite_autoincrement=True,
)

Index("ix_events_site_time", events.c.site_id, events.c.time)

event_batches = Table(
    "event_batches",
    metadata,
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("batch_id", String(64), nullable=False),
    Column("received_at", UTCDateTime, nullable=False),
    Column("events", SmallInteger, nullable=False),
    PrimaryKeyConstraint("site_id", "batch_id", name="pk_event_batches"),
)

Index("ix_event_batches_received_at", event_batches.c.received_at)

# The advisory lock under which PostgreSQL's writers take ids and commit, so that ids commit in
# order (ingest.log_writer), and under which the store moves the sequence (store.log.LogPositions).
COMMIT_ORDER = "the events log's commit order"

# Column order of the hot-path INSERT (everything but the generated id).
EVENT_COLUMNS: tuple[str, ...] = tuple(c.name for c in events.columns if c.name != "id")
