"""annotations: dated notes on a site's graph

Revision ID: 0020_annotations
Revises: 0001
Create Date: 2026-11-27 15:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0020_annotations"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "annotations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("date", sa.Date(), nullable=False),
        sa.Column("text", sa.String(length=500), nullable=False),
        sa.Column("created_at", sightline.database.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name="fk_annotations_site_id", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_annotations"),
    )
    op.create_index("ix_annotations_site_date", "annotations", ["site_id", "date"])


def downgrade() -> None:
    op.drop_index("ix_annotations_site_date", table_name="annotations")
    op.drop_table("annotations")
