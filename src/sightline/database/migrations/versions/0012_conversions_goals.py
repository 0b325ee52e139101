"""conversions: the goals, saved funnels and saved segments of each site

Revision ID: 0012_conversions
Revises: 0001
Create Date: 2026-11-23 17:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from sightline.database.types import UTCDateTime

revision = "0012_conversions"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "goals",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("site_id", sa.Integer(), sa.ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("match", sa.String(8), nullable=True),
        sa.Column("path", sa.String(2000), nullable=True),
        sa.Column("event", sa.String(100), nullable=True),
        sa.Column("prop_key", sa.String(100), nullable=True),
        sa.Column("prop_value", sa.String(2000), nullable=True),
        sa.Column("revenue_prop", sa.String(100), nullable=True),
        sa.Column("currency", sa.String(3), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("site_id", "name", name="uq_goals_site_name"),
        sa.CheckConstraint("kind IN ('page', 'event')", name="ck_goals_kind"),
    )
    for table, payload in (("funnels", "steps"), ("segments", "filters")):
        op.create_table(
            table,
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("site_id", sa.Integer(), sa.ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
            sa.Column("name", sa.String(100), nullable=False),
            sa.Column(payload, sa.Text(), nullable=False),
            sa.Column("created_at", UTCDateTime(), nullable=False),
            sa.UniqueConstraint("site_id", "name", name=f"uq_{table}_site_name"),
        )


def downgrade() -> None:
    op.drop_table("segments")
    op.drop_table("funnels")
    op.drop_table("goals")
