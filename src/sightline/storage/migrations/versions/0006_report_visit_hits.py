"""reports: the pages each visit viewed and the events it sent (for filtered reports)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21 04:40:00

Visits the rollup job has already folded get their rows here from the events (up to the job's
watermark), so filtered reports stay exact across the upgrade; the job adds the rest.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.storage.types

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

UTC = sightline.storage.types.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "report_visit_hits",
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=1), nullable=False),
        sa.Column("value", sa.String(length=500), nullable=False),
        sa.Column("first_at", UTC(timezone=True), nullable=False),
        sa.Column("last_at", UTC(timezone=True), nullable=False),
        sa.Column("views", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name="fk_report_visit_hits_site_id", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("site_id", "session_id", "kind", "value", name="pk_report_visit_hits"),
    )
    op.execute(
        "INSERT INTO report_visit_hits (site_id, session_id, kind, value, first_at, last_at, views) "
        "SELECT site_id, session_id, CASE WHEN name = 'pageview' THEN 'p' ELSE 'e' END, "
        "substr(CASE WHEN name = 'pageview' THEN path ELSE name END, 1, 500), MIN(time), MAX(time), COUNT(*) "
        "FROM events WHERE id <= (SELECT COALESCE(MAX(last_event_id), 0) FROM report_state "
        "WHERE name = 'rollup') "
        "GROUP BY site_id, session_id, CASE WHEN name = 'pageview' THEN 'p' ELSE 'e' END, "
        "substr(CASE WHEN name = 'pageview' THEN path ELSE name END, 1, 500)"
    )
    op.create_index(
        "ix_report_visit_hits_value",
        "report_visit_hits",
        ["site_id", "kind", "value", "first_at", "session_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_report_visit_hits_value", table_name="report_visit_hits")
    op.drop_table("report_visit_hits")
