"""console: remember the ids of deleted sites so that they are never given out again

Revision ID: 0010_console
Revises: 0001
Create Date: 2026-11-23 16:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from sightline.database.types import UTCDateTime

revision = "0010_console"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deleted_sites",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("deleted_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("deleted_sites")
