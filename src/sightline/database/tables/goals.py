"""Conversions: the goals, saved funnels and saved segments of each site (migration 0012).

A goal is a page goal (``match`` and ``path``: the path rules of surveys' targeting) or an event
goal (``event``, optionally one prop ``prop_key`` equal to ``prop_value``); an event goal may name
a numeric prop as its amount (``revenue_prop``) in one ``currency`` (ISO 4217). Names are unique
per site. Reports turn a goal into a condition on the analytics store's events.
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, Integer, String, Table, Text, UniqueConstraint

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

goals = Table(
    "goals",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("match", String(8), nullable=True),
    Column("path", String(2000), nullable=True),
    Column("event", String(100), nullable=True),
    Column("prop_key", String(100), nullable=True),
    Column("prop_value", String(2000), nullable=True),
    Column("revenue_prop", String(100), nullable=True),
    Column("currency", String(3), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("site_id", "name", name="uq_goals_site_name"),
    CheckConstraint("kind IN ('page', 'event')", name="ck_goals_kind"),
)

# Saved funnels: ``steps`` is a JSON list of 2 to 8 step strings (``page:/path``, ``event:name``).
funnels = Table(
    "funnels",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("steps", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("site_id", "name", name="uq_funnels_site_name"),
)

# Saved segments: ``filters`` is a JSON object of report filters (``{"browser": "!Safari"}``).
segments = Table(
    "segments",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("filters", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("site_id", "name", name="uq_segments_site_name"),
)
