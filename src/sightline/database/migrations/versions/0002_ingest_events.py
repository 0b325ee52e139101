"""ingest: the raw events table and the batch ids that keep retries idempotent

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 03:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("time", UTC(timezone=True), nullable=False),
        sa.Column("visitor_id", sa.String(length=200), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("path", sa.String(length=2000), nullable=False),
        sa.Column("referrer_source", sa.String(length=255), nullable=True),
        sa.Column("referrer", sa.String(length=2000), nullable=True),
        sa.Column("utm_source", sa.String(length=200), nullable=True),
        sa.Column("utm_medium", sa.String(length=200), nullable=True),
        sa.Column("utm_campaign", sa.String(length=200), nullable=True),
        sa.Column("utm_term", sa.String(length=200), nullable=True),
        sa.Column("utm_content", sa.String(length=200), nullable=True),
        sa.Column("browser", sa.String(length=100), nullable=True),
        sa.Column("os", sa.String(length=100), nullable=True),
        sa.Column("device_type", sa.String(length=16), nullable=True),
        sa.Column("screen_class", sa.String(length=16), nullable=True),
        sa.Column("props", sa.Text(), nullable=True),
        sa.Column("batch_id", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name=op.f("fk_events_site_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_site_time", ["site_id", "time"], unique=False)

    op.create_table(
        "event_batches",
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.String(length=64), nullable=False),
        sa.Column("received_at", UTC(timezone=True), nullable=False),
        sa.Column("events", sa.SmallInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name=op.f("fk_event_batches_site_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("site_id", "batch_id", name="pk_event_batches"),
    )
    with op.batch_alter_table("event_batches", schema=None) as batch_op:
        batch_op.create_index("ix_event_batches_received_at", ["received_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("event_batches", schema=None) as batch_op:
        batch_op.drop_index("ix_event_batches_received_at")
    op.drop_table("event_batches")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_site_time")
    op.drop_table("events")
