"""recordings: the index of session recordings and their stored chunks

Revision ID: 0004
Revises: 0001
Create Date: 2026-11-21 03:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0004"
down_revision = "0001"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "recordings",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("visitor_id", sa.String(length=200), nullable=False),
        sa.Column("started_at", UTC(timezone=True), nullable=False),
        sa.Column("updated_at", UTC(timezone=True), nullable=False),
        sa.Column("first_ts", sa.BigInteger(), nullable=True),
        sa.Column("last_ts", sa.BigInteger(), nullable=True),
        sa.Column("pages", sa.Integer(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("has_snapshot", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name=op.f("fk_recordings_site_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recordings")),
    )
    op.create_index("ix_recordings_site_started", "recordings", ["site_id", "started_at", "id"], unique=False)
    op.create_index("ix_recordings_started", "recordings", ["started_at"], unique=False)
    op.create_table(
        "recording_chunks",
        sa.Column("recording_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("first_ts", sa.BigInteger(), nullable=True),
        sa.Column("last_ts", sa.BigInteger(), nullable=True),
        sa.Column("stored_at", UTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["recording_id"],
            ["recordings.id"],
            name=op.f("fk_recording_chunks_recording_id"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("recording_id", "seq", name="pk_recording_chunks"),
    )


def downgrade() -> None:
    op.drop_table("recording_chunks")
    op.drop_index("ix_recordings_started", table_name="recordings")
    op.drop_index("ix_recordings_site_started", table_name="recordings")
    op.drop_table("recordings")
