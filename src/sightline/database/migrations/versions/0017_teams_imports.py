"""teams: imported history (imports, imported_figures) and members' e-mail subscriptions

Revision ID: 0017_teams_imports
Revises: 0015_teams_mail
Create Date: 2026-11-23 23:59:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0017_teams_imports"
down_revision = "0015_teams_mail"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "mail_subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("changed_at", UTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name="fk_mail_subscriptions_site_id", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_mail_subscriptions_user_id", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_mail_subscriptions"),
        sa.UniqueConstraint("site_id", "user_id", name="uq_mail_subscriptions_site_id"),
        sa.UniqueConstraint("token", name="uq_mail_subscriptions_token"),
    )
    op.create_table(
        "imports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("checksum", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("read_bytes", sa.BigInteger(), nullable=False),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.Column("first_day", sa.Date(), nullable=True),
        sa.Column("last_day", sa.Date(), nullable=True),
        sa.Column("tables", sa.JSON(), nullable=False),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("finished_at", UTC(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name="fk_imports_site_id", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_imports"),
    )
    op.create_index("ix_imports_site_id", "imports", ["site_id"])
    op.create_table(
        "imported_figures",
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("dimension", sa.String(length=16), nullable=False),
        sa.Column("value", sa.String(length=500), nullable=False),
        sa.Column("visitors", sa.BigInteger(), nullable=False),
        sa.Column("visits", sa.BigInteger(), nullable=False),
        sa.Column("pageviews", sa.BigInteger(), nullable=False),
        sa.Column("bounces", sa.BigInteger(), nullable=False),
        sa.Column("duration", sa.BigInteger(), nullable=False),
        sa.Column("events", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["import_id"], ["imports.id"], name="fk_imported_figures_import_id", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_imported_figures_site_id", "imported_figures", ["site_id", "dimension", "day"])
    op.create_index("ix_imported_figures_import_id", "imported_figures", ["import_id"])


def downgrade() -> None:
    op.drop_index("ix_imported_figures_import_id", table_name="imported_figures")
    op.drop_index("ix_imported_figures_site_id", table_name="imported_figures")
    op.drop_table("imported_figures")
    op.drop_index("ix_imports_site_id", table_name="imports")
    op.drop_table("imports")
    op.drop_table("mail_subscriptions")
