"""sites: the referrer hosts each site blocks as spam

Revision ID: 0021_sites_blocked_referrers
Revises: 0001
Create Date: 2026-11-27 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021_sites_blocked_referrers"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sites", sa.Column("blocked_referrers", sa.Text(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("sites") as batch:
        batch.drop_column("blocked_referrers")
