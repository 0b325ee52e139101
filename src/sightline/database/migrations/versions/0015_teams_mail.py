"""teams: the log of e-mails sent (digests and notices go out once)

Revision ID: 0015_teams_mail
Revises: 0014_teams
Create Date: 2026-11-23 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0015_teams_mail"
down_revision = "0014_teams"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "mail_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("period", sa.String(length=40), nullable=False),
        sa.Column("recipient", sa.String(length=320), nullable=False),
        sa.Column("sent_at", UTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name="fk_mail_log_site_id", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_mail_log"),
        sa.UniqueConstraint("site_id", "period", "recipient", name="uq_mail_log_site_id"),
    )


def downgrade() -> None:
    op.drop_table("mail_log")
