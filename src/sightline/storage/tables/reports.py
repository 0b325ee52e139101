"""Reports: hourly and daily rollups with visitor sketches, per-visit state, and the job's watermark.

``report_hourly`` and ``report_daily`` hold one row per (site, dimension, value, bucket); a
bucket is a UTC hour or a UTC day counted from the Unix epoch. Counters add up across buckets;
``visitors`` is a mergeable sketch (``sightline.reports.sketch``). ``report_visits`` keeps one
row per visit (site, session) for bounce, duration, entry and exit pages, and the filtered
reports. ``report_state`` holds the id of the last event the rollup job has folded in.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Table,
)

from sightline.storage.metadata import metadata
from sightline.storage.types import UTCDateTime

VALUE_MAX = 500  # longer values (paths, prop values) are cut to this many characters


def _rollup(name: str) -> Table:
    return Table(
        name,
        metadata,
        Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
        Column("dim", String(16), nullable=False),
        Column("bucket", Integer, nullable=False),
        Column("value", String(VALUE_MAX), nullable=False),
        Column("pageviews", BigInteger, nullable=False),
        Column("events", BigInteger, nullable=False),
        Column("visits", BigInteger, nullable=False),
        Column("bounces", BigInteger, nullable=False),
        Column("duration", BigInteger, nullable=False),
        Column("visitors", LargeBinary, nullable=True),
        PrimaryKeyConstraint("site_id", "dim", "bucket", "value", name=f"pk_{name}"),
    )


report_hourly = _rollup("report_hourly")
report_daily = _rollup("report_daily")
Index("ix_report_hourly_value", report_hourly.c.site_id, report_hourly.c.dim, report_hourly.c.value)
Index("ix_report_daily_value", report_daily.c.site_id, report_daily.c.dim, report_daily.c.value)

report_visits = Table(
    "report_visits",
    metadata,
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("session_id", String(64), nullable=False),
    Column("visitor_id", String(200), nullable=False),
    Column("started_at", UTCDateTime, nullable=False),
    Column("ended_at", UTCDateTime, nullable=False),
    Column("pageviews", Integer, nullable=False),
    Column("duration", Integer, nullable=False),
    Column("entry_path", String(VALUE_MAX), nullable=True),
    Column("entry_at", UTCDateTime, nullable=True),
    Column("exit_path", String(VALUE_MAX), nullable=True),
    Column("exit_at", UTCDateTime, nullable=True),
    Column("source", String(VALUE_MAX), nullable=False),
    Column("utm_source", String(200), nullable=False),
    Column("utm_medium", String(200), nullable=False),
    Column("utm_campaign", String(200), nullable=False),
    Column("browser", String(100), nullable=False),
    Column("os", String(100), nullable=False),
    Column("device", String(16), nullable=False),
    PrimaryKeyConstraint("site_id", "session_id", name="pk_report_visits"),
)
Index("ix_report_visits_site_started", report_visits.c.site_id, report_visits.c.started_at)

report_state = Table(
    "report_state",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("last_event_id", BigInteger, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
