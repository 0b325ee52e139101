"""Sites: an owner's site connections with their public key and connection state.

``deleted_sites`` remembers the id of every deleted site, so that SQLite (which would hand the
highest id out again) never gives a new site the id of a deleted one whose data other stores
(the analytics store, recording files) may still be dropping.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

sites = Table(
    "sites",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("owner_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("domain", String(260), nullable=False),
    Column("key", String(32), nullable=False, unique=True),
    Column("collection_enabled", Boolean, nullable=False, default=True),
    Column("recording_enabled", Boolean, nullable=False, default=False),
    Column("recording_sample_rate", Float, nullable=False, default=1.0),
    Column("created_at", UTCDateTime, nullable=False),
    # Unused since the state is derived when read (sites.service.connection_state); kept because
    # dropping a column of `sites` on SQLite rebuilds the table under its children's foreign keys.
    Column("connection_state", String(16), nullable=False, default="pending"),
    Column("first_event_at", UTCDateTime, nullable=True),
    Column("last_event_at", UTCDateTime, nullable=True),
    Column("last_check_at", UTCDateTime, nullable=True),
    Column("last_check_error", String(32), nullable=True),
    Column("last_check_detail", Text, nullable=True),
    # IANA zone the reports use for days and hours (migration 0005, reports).
    Column("timezone", String(64), nullable=False, default="UTC", server_default="UTC"),
    # The first day of the site's weeks (weekly retention cohorts; migration 0022).
    Column("week_start", String(10), nullable=False, default="monday", server_default="monday"),
    # Privacy settings (migration 0013b): cookieless counting, excluded client addresses (a JSON
    # list of addresses and CIDR ranges), retention in days (NULL: --event-retention-days).
    Column("cookieless", Boolean, nullable=False, default=False, server_default=false()),
    Column("excluded_addresses", Text, nullable=False, default="[]", server_default="[]"),
    Column("retention_days", Integer, nullable=True),
    # Referrer hosts the owner blocks as spam, beside the shipped list (migration 0021; a JSON list).
    Column("blocked_referrers", Text, nullable=False, default="[]", server_default="[]"),
    # Autocapture switches and file-download extensions (migration 0015; sightline.autocapture).
    Column("capture_outbound_links", Boolean, nullable=False, default=False, server_default=false()),
    Column("capture_file_downloads", Boolean, nullable=False, default=False, server_default=false()),
    Column("capture_engagement", Boolean, nullable=False, default=False, server_default=false()),
    Column("capture_web_vitals", Boolean, nullable=False, default=False, server_default=false()),
    Column("capture_heatmaps", Boolean, nullable=False, default=False, server_default=false()),
    Column("file_download_extensions", String(600), nullable=True),
    UniqueConstraint("owner_id", "domain", name="uq_sites_owner_domain"),
)

Index("ix_sites_owner_id", sites.c.owner_id)


deleted_sites = Table(
    "deleted_sites",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("deleted_at", UTCDateTime, nullable=False),
)
