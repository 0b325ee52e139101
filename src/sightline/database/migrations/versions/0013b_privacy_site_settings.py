"""privacy: per-site cookieless counting, address exclusions, retention; salts; erasures

Revision ID: 0013b
Revises: 0013
Create Date: 2026-11-23 17:15:00

``sites`` gains ``cookieless``, ``excluded_addresses`` (JSON list of addresses and CIDR ranges)
and ``retention_days`` (NULL: the global ``--event-retention-days``). ``visitor_salts`` holds the
secret salt of each UTC day for cookieless visitor codes (deleted 48 hours after its day began).
``erasures`` records each visitor erasure without the visitor's code.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0013b"
down_revision = "0013"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def upgrade() -> None:
    op.add_column("sites", sa.Column("cookieless", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("sites", sa.Column("excluded_addresses", sa.Text(), nullable=False, server_default="[]"))
    op.add_column("sites", sa.Column("retention_days", sa.Integer(), nullable=True))
    op.create_table(
        "visitor_salts",
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("salt", sa.LargeBinary(length=32), nullable=False),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("day"),
    )
    op.create_table(
        "erasures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("finished_at", UTC(timezone=True), nullable=True),
        sa.Column("events_removed", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("recordings_removed", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("responses_removed", sa.Integer(), nullable=False, server_default="0"),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["requested_by"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_erasures_site", "erasures", ["site_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_erasures_site", table_name="erasures")
    op.drop_table("erasures")
    op.drop_table("visitor_salts")
    with op.batch_alter_table("sites") as batch:
        batch.drop_column("retention_days")
        batch.drop_column("excluded_addresses")
        batch.drop_column("cookieless")
