"""events: the visitor's language (its primary subtag, e.g. ``en``), empty for older events

Revision ID: 0023_ingest_language
Revises: 0018_ingest
Create Date: 2026-11-27 22:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_ingest_language"
down_revision = "0018_ingest"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("events", sa.Column("language", sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_column("language")
