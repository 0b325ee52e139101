"""Session recordings: one row per recording and one per stored chunk (the index of the chunk files).

The chunk bytes live in a ``recordings.store.ChunkStore`` (files under ``DATA_DIR/recordings`` by
default); these tables say which chunks exist, in which order, and what the recording holds.
``recording_chunks``' primary key ``(recording_id, seq)`` is what stores a retried chunk once.
``ix_recordings_site_started`` serves the newest-first list of a site; ``ix_recordings_started``
the retention cleanup.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
)

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

recordings = Table(
    "recordings",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(64), nullable=False),
    Column("visitor_id", String(200), nullable=False),
    Column("started_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("first_ts", BigInteger, nullable=True),
    Column("last_ts", BigInteger, nullable=True),
    Column("pages", Integer, nullable=False),
    Column("chunks", Integer, nullable=False),
    Column("size_bytes", BigInteger, nullable=False),
    Column("has_snapshot", Boolean, nullable=False),
    # What the list shows of the visit (migration 0016_console): the path of its first page (from
    # the recorder's first "meta" event), the browser and device type of the uploading client.
    Column("entry_page", String(2000), nullable=True),
    Column("browser", String(64), nullable=True),
    Column("device", String(16), nullable=True),
)

Index("ix_recordings_site_started", recordings.c.site_id, recordings.c.started_at, recordings.c.id)
Index("ix_recordings_started", recordings.c.started_at)

recording_chunks = Table(
    "recording_chunks",
    metadata,
    Column("recording_id", String(64), ForeignKey("recordings.id", ondelete="CASCADE"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("size_bytes", Integer, nullable=False),
    Column("events", Integer, nullable=False),
    Column("first_ts", BigInteger, nullable=True),
    Column("last_ts", BigInteger, nullable=True),
    Column("stored_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("recording_id", "seq", name="pk_recording_chunks"),
)
