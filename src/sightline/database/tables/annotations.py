"""Annotations: dated notes an owner or admin puts on a site's graph (a release, a campaign, an
outage). ``date`` is a day of the site's own calendar (its time zone), as the daily graph shows it.
"""

from __future__ import annotations

from sqlalchemy import Column, Date, ForeignKey, Index, Integer, String, Table

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

site_annotations = Table(
    "annotations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("date", Date, nullable=False),
    Column("text", String(500), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

Index("ix_annotations_site_date", site_annotations.c.site_id, site_annotations.c.date)
