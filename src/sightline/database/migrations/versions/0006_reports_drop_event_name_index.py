"""reports: drop the events index of the database's filtered reports

The column store (``sightline.reports.columns``) answers filtered reports now; the index on
``events (site_id, name, time)`` only served the slower database path, and every stored event
paid for it on ingest's hot path. That path still works without it (through the
``(site_id, time)`` index).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21 07:10:00
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_events_site_name_time", table_name="events")


def downgrade() -> None:
    op.create_index("ix_events_site_name_time", "events", ["site_id", "name", "time"])
