"""The schema: one ``MetaData`` for every table, so one Alembic history covers them all.

Tables are declared per concern in ``database/tables/<concern>.py`` (accounts, sites, and one
module per feature that stores data). Feature modules read and write their tables through
SQLAlchemy Core.
"""

from __future__ import annotations

from sightline.database.metadata import metadata
from sightline.database.tables.accounts import sessions, setup_tokens, users
from sightline.database.tables.annotations import site_annotations
from sightline.database.tables.events import event_batches, events
from sightline.database.tables.goals import funnels, goals, segments
from sightline.database.tables.imports import imported_figures, imports
from sightline.database.tables.privacy import erasures, store_tasks, visitor_salts
from sightline.database.tables.recordings import recording_chunks, recordings
from sightline.database.tables.sites import deleted_sites, sites
from sightline.database.tables.surveys import survey_responses, survey_revisions, surveys
from sightline.database.tables.teams import (
    api_keys,
    invitations,
    mail_log,
    mail_subscriptions,
    members,
    shares,
)

__all__ = [
    "api_keys",
    "deleted_sites",
    "erasures",
    "event_batches",
    "events",
    "funnels",
    "goals",
    "imported_figures",
    "imports",
    "invitations",
    "mail_log",
    "mail_subscriptions",
    "members",
    "metadata",
    "recording_chunks",
    "recordings",
    "segments",
    "sessions",
    "setup_tokens",
    "shares",
    "site_annotations",
    "sites",
    "store_tasks",
    "survey_responses",
    "survey_revisions",
    "surveys",
    "users",
    "visitor_salts",
]
