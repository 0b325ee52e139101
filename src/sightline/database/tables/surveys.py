"""Feedback surveys: the survey, its immutable revisions, and visitors' responses.

A revision row holds the whole definition (name, questions, targeting, accent colour) as JSON text;
it is frozen once ``published_at`` is set. Responses are ordered by their own ``id`` (a sequence),
and ``ix_survey_responses_export`` on ``(survey_id, revision, id)`` serves every export batch from
the index alone, whatever its offset.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a 64-bit identity.
ResponseId = BigInteger().with_variant(Integer(), "sqlite")

surveys = Table(
    "surveys",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("published_revision", Integer, nullable=True),
    Column("draft_revision", Integer, nullable=True),
    Column("archived_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

Index("ix_surveys_site_id", surveys.c.site_id)

survey_revisions = Table(
    "survey_revisions",
    metadata,
    Column("survey_id", Integer, ForeignKey("surveys.id", ondelete="CASCADE"), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("definition", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("published_at", UTCDateTime, nullable=True),
    PrimaryKeyConstraint("survey_id", "revision", name="pk_survey_revisions"),
)

survey_responses = Table(
    "survey_responses",
    metadata,
    Column("id", ResponseId, primary_key=True, autoincrement=True),
    Column("survey_id", Integer, nullable=False),
    Column("revision", Integer, nullable=False),
    Column("client_id", String(64), nullable=False),
    Column("visitor_id", String(200), nullable=False),
    Column("page_path", String(2000), nullable=False),
    Column("answers", Text, nullable=False),
    Column("submitted_at", UTCDateTime, nullable=False),
    ForeignKeyConstraint(
        ["survey_id", "revision"],
        ["survey_revisions.survey_id", "survey_revisions.revision"],
        name="fk_survey_responses_revision",
        ondelete="CASCADE",
    ),
    UniqueConstraint("survey_id", "client_id", name="uq_survey_responses_client"),
)

Index(
    "ix_survey_responses_export",
    survey_responses.c.survey_id,
    survey_responses.c.revision,
    survey_responses.c.id,
)
