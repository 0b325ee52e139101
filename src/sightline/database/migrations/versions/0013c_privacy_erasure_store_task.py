"""privacy: an erasure points at the analytics store's task, to show when the store has applied it

Revision ID: 0013c
Revises: 0013b
Create Date: 2026-11-23 17:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013c"
down_revision = "0013b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("erasures", sa.Column("store_task_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("erasures") as batch:
        batch.drop_column("store_task_id")
