"""sites: the first day of the site's weeks (weekly retention cohorts)

Revision ID: 0022_sites_week_start
Revises: 0021_sites_blocked_referrers
Create Date: 2026-11-27 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_sites_week_start"
down_revision = "0021_sites_blocked_referrers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sites", sa.Column("week_start", sa.String(10), nullable=False, server_default="monday"))


def downgrade() -> None:
    with op.batch_alter_table("sites") as batch:
        batch.drop_column("week_start")
