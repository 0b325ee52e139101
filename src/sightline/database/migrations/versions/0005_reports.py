"""reports: site time zones, hourly and daily rollups, visits, the rollup watermark

Revision ID: 0005
Revises: 0001
Depends on: 0002 (the events table, which gets an index for filtered reports)
Create Date: 2026-11-21 03:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0005"
down_revision = "0001"
branch_labels = None
depends_on = "0002"

UTC = sightline.database.types.UTCDateTime


def _rollup(name: str) -> None:
    op.create_table(
        name,
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("dim", sa.String(length=16), nullable=False),
        sa.Column("bucket", sa.Integer(), nullable=False),
        sa.Column("value", sa.String(length=500), nullable=False),
        sa.Column("pageviews", sa.BigInteger(), nullable=False),
        sa.Column("events", sa.BigInteger(), nullable=False),
        sa.Column("visits", sa.BigInteger(), nullable=False),
        sa.Column("bounces", sa.BigInteger(), nullable=False),
        sa.Column("duration", sa.BigInteger(), nullable=False),
        sa.Column("visitors", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name=f"fk_{name}_site_id", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("site_id", "dim", "bucket", "value", name=f"pk_{name}"),
    )
    op.create_index(f"ix_{name}_value", name, ["site_id", "dim", "value"])


def upgrade() -> None:
    with op.batch_alter_table("sites", schema=None) as batch_op:
        batch_op.add_column(sa.Column("timezone", sa.String(length=64), nullable=False, server_default="UTC"))
    _rollup("report_hourly")
    _rollup("report_daily")
    op.create_table(
        "report_visits",
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("visitor_id", sa.String(length=200), nullable=False),
        sa.Column("started_at", UTC(timezone=True), nullable=False),
        sa.Column("ended_at", UTC(timezone=True), nullable=False),
        sa.Column("pageviews", sa.Integer(), nullable=False),
        sa.Column("duration", sa.Integer(), nullable=False),
        sa.Column("entry_path", sa.String(length=500), nullable=True),
        sa.Column("entry_at", UTC(timezone=True), nullable=True),
        sa.Column("exit_path", sa.String(length=500), nullable=True),
        sa.Column("exit_at", UTC(timezone=True), nullable=True),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("utm_source", sa.String(length=200), nullable=False),
        sa.Column("utm_medium", sa.String(length=200), nullable=False),
        sa.Column("utm_campaign", sa.String(length=200), nullable=False),
        sa.Column("browser", sa.String(length=100), nullable=False),
        sa.Column("os", sa.String(length=100), nullable=False),
        sa.Column("device", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name="fk_report_visits_site_id", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("site_id", "session_id", name="pk_report_visits"),
    )
    op.create_index("ix_report_visits_site_started", "report_visits", ["site_id", "started_at"])
    op.create_table(
        "report_state",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("last_event_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", UTC(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_report_state"),
    )
    # Filtered reports find the visits with a given custom event through this index.
    op.create_index("ix_events_site_name_time", "events", ["site_id", "name", "time"])


def downgrade() -> None:
    op.drop_index("ix_events_site_name_time", table_name="events")
    op.drop_table("report_state")
    op.drop_index("ix_report_visits_site_started", table_name="report_visits")
    op.drop_table("report_visits")
    for name in ("report_daily", "report_hourly"):
        op.drop_index(f"ix_{name}_value", table_name=name)
        op.drop_table(name)
    with op.batch_alter_table("sites", schema=None) as batch_op:
        batch_op.drop_column("timezone")
