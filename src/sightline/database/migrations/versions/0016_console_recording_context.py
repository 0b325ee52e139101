"""console: what the recordings list shows of each visit (entry page, browser, device type)

Revision ID: 0016_console
Revises: 0004
Create Date: 2026-11-23 20:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_console"
down_revision = "0004"
branch_labels = None
depends_on = None

COLUMNS = (("entry_page", 2000), ("browser", 64), ("device", 16))


def upgrade() -> None:
    # Plain ALTER TABLE ... ADD COLUMN on both engines: a batch operation may copy ``recordings``
    # into a new table on SQLite, and dropping the old one would cascade to its chunks' rows.
    for name, length in COLUMNS:
        op.add_column("recordings", sa.Column(name, sa.String(length=length), nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE ... DROP COLUMN too (SQLite 3.35 and later), for the same reason.
    for name, _ in reversed(COLUMNS):
        op.drop_column("recordings", name)
