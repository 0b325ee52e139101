"""Owner accounts, their console sessions and the one-time setup tokens."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Integer, LargeBinary, String, Table

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("email", String(320), nullable=False, unique=True),
    Column("password_hash", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("token_hash", LargeBinary(32), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
)

setup_tokens = Table(
    "setup_tokens",
    metadata,
    Column("token_hash", LargeBinary(32), primary_key=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
)
