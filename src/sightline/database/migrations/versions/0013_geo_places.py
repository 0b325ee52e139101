"""geo: where events came from (country, region, city) and the analytics store's privacy tasks

Revision ID: 0013
Revises: 0002
Create Date: 2026-11-23 16:50:00

``events`` gains three nullable columns filled by ingest (``sightline.geo``); the client address
they come from is never stored. ``store_tasks`` is how erasure and retention reach the analytics
store: one row per visitor erasure (``erase_visitor``) or retention cut (``prune_before``), which
the store applies and marks ``done_at``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0013"
down_revision = "0002"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def upgrade() -> None:
    # Plain ADD COLUMN (no table copy on SQLite): instant whatever the size of the log.
    op.add_column("events", sa.Column("country", sa.String(length=2), nullable=True))
    op.add_column("events", sa.Column("region", sa.String(length=100), nullable=True))
    op.add_column("events", sa.Column("city", sa.String(length=100), nullable=True))
    op.create_table(
        "store_tasks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("visitor_id", sa.String(length=200), nullable=True),
        sa.Column("before", UTC(timezone=True), nullable=True),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("done_at", UTC(timezone=True), nullable=True),
        sa.CheckConstraint("kind IN ('erase_visitor', 'prune_before')", name="ck_store_tasks_kind"),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_store_tasks_pending", "store_tasks", ["done_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_store_tasks_pending", table_name="store_tasks")
    op.drop_table("store_tasks")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("city")
        batch.drop_column("region")
        batch.drop_column("country")
