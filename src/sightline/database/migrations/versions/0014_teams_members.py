"""teams: members and roles, invitations, API keys, shared dashboards

Revision ID: 0014_teams
Revises: 0001
Create Date: 2026-11-23 16:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0014_teams"
down_revision = "0001"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def _user_fk(table: str, column: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], ["users.id"], name=f"fk_{table}_{column}", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "members",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("site_ids", sa.JSON(), nullable=True),
        sa.Column("invited_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        _user_fk("members", "user_id"),
        _user_fk("members", "team_id"),
        sa.PrimaryKeyConstraint("user_id", name="pk_members"),
    )
    op.create_index("ix_members_team_id", "members", ["team_id"], unique=False)
    op.create_table(
        "invitations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("site_ids", sa.JSON(), nullable=True),
        sa.Column("token_hash", sa.LargeBinary(length=32), nullable=False),
        sa.Column("invited_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("expires_at", UTC(timezone=True), nullable=False),
        _user_fk("invitations", "team_id"),
        sa.PrimaryKeyConstraint("id", name="pk_invitations"),
        sa.UniqueConstraint("token_hash", name="uq_invitations_token_hash"),
    )
    op.create_index("ix_invitations_team_id", "invitations", ["team_id"], unique=False)
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=True),
        sa.Column("key_hash", sa.LargeBinary(length=32), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("last_used_at", UTC(timezone=True), nullable=True),
        _user_fk("api_keys", "team_id"),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name="fk_api_keys_site_id", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
    )
    op.create_index("ix_api_keys_team_id", "api_keys", ["team_id"], unique=False)
    op.create_table(
        "shares",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("last_viewed_at", UTC(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name="fk_shares_site_id", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_shares"),
        sa.UniqueConstraint("token", name="uq_shares_token"),
    )
    op.create_index("ix_shares_site_id", "shares", ["site_id"], unique=False)


def downgrade() -> None:
    for table in ("shares", "api_keys", "invitations", "members"):
        op.drop_table(table)
