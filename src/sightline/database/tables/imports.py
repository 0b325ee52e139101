"""Imported history: a file's import (``imports``: its progress and outcome) and the daily figures
it brought (``imported_figures``: one row per day, dimension and value; migration 0017_teams_imports).

``imported_figures`` is the one copy of imported history: reports read it beside the analytics
store (``sightline.imports.figures``); deleting an import deletes its rows.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
)

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

imports = Table(
    "imports",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("kind", String(16), nullable=False),  # "plausible" | "umami" | "matomo" | "daily"
    Column("filename", String(255), nullable=False),
    Column("checksum", String(64), nullable=False),  # SHA-256 of the uploaded file, hex
    Column("status", String(16), nullable=False),  # "queued" | "running" | "done" | "failed"
    Column("size_bytes", BigInteger, nullable=False),  # the bytes to read (a zip's: uncompressed)
    Column("read_bytes", BigInteger, nullable=False),
    Column("rows", Integer, nullable=False),  # lines of the file(s) read so far
    Column("first_day", Date, nullable=True),
    Column("last_day", Date, nullable=True),
    Column("tables", JSON, nullable=False),  # the files (or tables) the upload holds
    Column("error", JSON, nullable=True),  # {"code", "message", "field"} when it failed
    Column("created_by", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
)

imported_figures = Table(
    "imported_figures",
    metadata,
    Column("import_id", Integer, ForeignKey("imports.id", ondelete="CASCADE"), nullable=False),
    Column("site_id", Integer, nullable=False),
    Column("day", Date, nullable=False),  # a day in the site's time zone
    # "total", or the reports' dimension: page, entry, exit, source, utm_source, ... (figures.py)
    Column("dimension", String(16), nullable=False),
    Column("value", String(500), nullable=False),
    Column("visitors", BigInteger, nullable=False),
    Column("visits", BigInteger, nullable=False),
    Column("pageviews", BigInteger, nullable=False),
    Column("bounces", BigInteger, nullable=False),
    Column("duration", BigInteger, nullable=False),  # seconds, summed over the visits
    Column("events", BigInteger, nullable=False),
)
Index(
    "ix_imported_figures_site_id",
    imported_figures.c.site_id,
    imported_figures.c.dimension,
    imported_figures.c.day,
)
Index("ix_imported_figures_import_id", imported_figures.c.import_id)
