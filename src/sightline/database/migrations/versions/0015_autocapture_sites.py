"""autocapture: per-site switches for outbound links, file downloads, engagement, web vitals and
heatmaps, and the site's file-download extensions (NULL: the default list)

Revision ID: 0015
Revises: 0001
Create Date: 2026-11-23 17:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0001"
branch_labels = None
depends_on = None

SWITCHES = ("outbound_links", "file_downloads", "engagement", "web_vitals", "heatmaps")


def upgrade() -> None:
    # Plain ALTER TABLE ... ADD COLUMN on both engines: a batch operation may copy ``sites`` into a
    # new table on SQLite, and dropping the old one would cascade to every row that refers to it.
    for name in SWITCHES:
        op.add_column(
            "sites", sa.Column(f"capture_{name}", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.add_column("sites", sa.Column("file_download_extensions", sa.String(length=600), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sites") as batch:
        batch.drop_column("file_download_extensions")
        for name in reversed(SWITCHES):
            batch.drop_column(f"capture_{name}")
