"""reports: drop the rollups, the visits and the watermark of the rollup job

Every report reads the analytics store now (``sightline.store``), fed from the ``events`` log;
the first start after this upgrade builds the store from the existing events by itself.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 17:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

UTC = sightline.database.types.UTCDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("report_hourly", "report_daily", "report_visits", "report_state"):
        op.drop_table(table)


def downgrade() -> None:
    for name in ("report_hourly", "report_daily"):
        op.create_table(
            name,
            sa.Column("site_id", sa.Integer, sa.ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
            sa.Column("dim", sa.String(16), nullable=False),
            sa.Column("bucket", sa.Integer, nullable=False),
            sa.Column("value", sa.String(500), nullable=False),
            sa.Column("pageviews", sa.BigInteger, nullable=False),
            sa.Column("events", sa.BigInteger, nullable=False),
            sa.Column("visits", sa.BigInteger, nullable=False),
            sa.Column("bounces", sa.BigInteger, nullable=False),
            sa.Column("duration", sa.BigInteger, nullable=False),
            sa.Column("visitors", sa.LargeBinary, nullable=True),
            sa.PrimaryKeyConstraint("site_id", "dim", "bucket", "value", name=f"pk_{name}"),
        )
        op.create_index(f"ix_{name}_value", name, ["site_id", "dim", "value"])
    op.create_table(
        "report_visits",
        sa.Column("site_id", sa.Integer, sa.ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("visitor_id", sa.String(200), nullable=False),
        sa.Column("started_at", UTC(timezone=True), nullable=False),
        sa.Column("ended_at", UTC(timezone=True), nullable=False),
        sa.Column("pageviews", sa.Integer, nullable=False),
        sa.Column("duration", sa.Integer, nullable=False),
        sa.Column("entry_path", sa.String(500), nullable=True),
        sa.Column("entry_at", UTC(timezone=True), nullable=True),
        sa.Column("exit_path", sa.String(500), nullable=True),
        sa.Column("exit_at", UTC(timezone=True), nullable=True),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("utm_source", sa.String(200), nullable=False),
        sa.Column("utm_medium", sa.String(200), nullable=False),
        sa.Column("utm_campaign", sa.String(200), nullable=False),
        sa.Column("browser", sa.String(100), nullable=False),
        sa.Column("os", sa.String(100), nullable=False),
        sa.Column("device", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("site_id", "session_id", name="pk_report_visits"),
    )
    op.create_index("ix_report_visits_site_started", "report_visits", ["site_id", "started_at"])
    op.create_table(
        "report_state",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("last_event_id", sa.BigInteger, nullable=False),
        sa.Column("updated_at", UTC(timezone=True), nullable=False),
    )
