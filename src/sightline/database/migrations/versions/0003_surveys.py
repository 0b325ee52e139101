"""surveys: surveys, their immutable revisions, and responses

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-21 03:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import sightline.database.types

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None

UTC = sightline.database.types.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "surveys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("published_revision", sa.Integer(), nullable=True),
        sa.Column("draft_revision", sa.Integer(), nullable=True),
        sa.Column("archived_at", UTC(timezone=True), nullable=True),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("updated_at", UTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name=op.f("fk_surveys_site_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_surveys")),
    )
    op.create_index("ix_surveys_site_id", "surveys", ["site_id"], unique=False)
    op.create_table(
        "survey_revisions",
        sa.Column("survey_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("definition", sa.Text(), nullable=False),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("published_at", UTC(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["survey_id"], ["surveys.id"], name=op.f("fk_survey_revisions_survey_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("survey_id", "revision", name="pk_survey_revisions"),
    )
    op.create_table(
        "survey_responses",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("survey_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("visitor_id", sa.String(length=200), nullable=False),
        sa.Column("page_path", sa.String(length=2000), nullable=False),
        sa.Column("answers", sa.Text(), nullable=False),
        sa.Column("submitted_at", UTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["survey_id", "revision"],
            ["survey_revisions.survey_id", "survey_revisions.revision"],
            name="fk_survey_responses_revision",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_survey_responses")),
        sa.UniqueConstraint("survey_id", "client_id", name="uq_survey_responses_client"),
    )
    op.create_index(
        "ix_survey_responses_export", "survey_responses", ["survey_id", "revision", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_survey_responses_export", table_name="survey_responses")
    op.drop_table("survey_responses")
    op.drop_table("survey_revisions")
    op.drop_index("ix_surveys_site_id", table_name="surveys")
    op.drop_table("surveys")
