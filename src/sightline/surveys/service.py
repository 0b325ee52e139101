"""Surveys of an owner's sites: create, list, read, edit, publish, archive, with immutable revisions.

Revision numbers start at 1. A new survey is draft revision 1. Publishing freezes the draft
(``published_at`` set, never changed again) and makes it the survey's ``revision``. Editing a
survey whose latest revision is published opens draft ``revision + 1``, a copy with the changes;
further edits change that draft until it is published. Archiving hides the survey from visitors;
publishing an archived survey shows it again (its pending draft, if any, becomes the new revision).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from sqlalchemy import Connection, RowMapping, func, insert, select, update

from sightline.database.schema import sites
from sightline.database.tables.surveys import survey_responses, survey_revisions, surveys
from sightline.database.types import utcnow
from sightline.errors import ApiError, not_found
from sightline.numbers import is_id
from sightline.sites import service as sites_service
from sightline.surveys import definition as checks

SURVEY_COLUMNS = (*surveys.c, sites.c.owner_id)


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def status_of(row: RowMapping) -> str:
    if row["archived_at"] is not None:
        return "archived"
    return "published" if row["published_revision"] is not None else "draft"


def latest_revision(row: RowMapping) -> int:
    return int(row["draft_revision"] or row["published_revision"])


def get_survey(conn: Connection, owner_id: int, survey_id: int) -> RowMapping:
    """The survey row when it belongs to one of ``owner_id``'s sites; 404 otherwise."""
    query = (
        select(*SURVEY_COLUMNS)
        .join(sites, sites.c.id == surveys.c.site_id)
        .where(surveys.c.id == survey_id, sites.c.owner_id == owner_id)
    )
    row = conn.execute(query).first()
    if row is None:
        raise not_found("survey")
    return row._mapping


def load_definition(conn: Connection, survey_id: int, revision: int) -> dict[str, Any]:
    raw = conn.execute(
        select(survey_revisions.c.definition).where(
            survey_revisions.c.survey_id == survey_id, survey_revisions.c.revision == revision
        )
    ).scalar_one()
    loaded: dict[str, Any] = orjson.loads(raw)
    return loaded


def published_revisions(conn: Connection, survey_id: int) -> list[RowMapping]:
    query = (
        select(survey_revisions)
        .where(survey_revisions.c.survey_id == survey_id, survey_revisions.c.published_at.is_not(None))
        .order_by(survey_revisions.c.revision)
    )
    return [row._mapping for row in conn.execute(query)]


def earlier_types(conn: Connection, survey_id: int) -> dict[str, str]:
    """Question id -> type over every published revision: an id never changes its type."""
    types: dict[str, str] = {}
    for row in published_revisions(conn, survey_id):
        for question in orjson.loads(row["definition"])["questions"]:
            types.setdefault(question["id"], question["type"])
    return types


def response_counts(conn: Connection, survey_ids: Iterable[int]) -> dict[tuple[int, int], int]:
    ids = list(survey_ids)
    if not ids:
        return {}
    query = (
        select(survey_responses.c.survey_id, survey_responses.c.revision, func.count())
        .where(survey_responses.c.survey_id.in_(ids))
        .group_by(survey_responses.c.survey_id, survey_responses.c.revision)
    )
    return {(int(s), int(r)): int(n) for s, r, n in conn.execute(query)}


def public_survey(
    conn: Connection, row: RowMapping, counts: Mapping[tuple[int, int], int] | None = None
) -> dict[str, Any]:
    """The survey record of the console API (shape documented in docs/surveys.md)."""
    survey_id = int(row["id"])
    if counts is None:
        counts = response_counts(conn, [survey_id])
    latest = load_definition(conn, survey_id, latest_revision(row))
    revisions = [
        {
            "revision": rev["revision"],
            "published_at": _iso(rev["published_at"]),
            "responses": counts.get((survey_id, rev["revision"]), 0),
        }
        for rev in published_revisions(conn, survey_id)
    ]
    return {
        "id": survey_id,
        "site_id": row["site_id"],
        "name": latest["name"],
        "status": status_of(row),
        "revision": row["published_revision"],
        "draft_revision": row["draft_revision"],
        "questions": latest["questions"],
        "targeting": latest["targeting"],
        "accent_color": latest["accent_color"],
        "auto_open": latest.get("auto_open"),
        "created_at": _iso(row["created_at"]),
        "updated_at": _iso(row["updated_at"]),
        "archived_at": _iso(row["archived_at"]),
        "responses": sum(item["responses"] for item in revisions),
        "revisions": revisions,
    }


def list_surveys(conn: Connection, owner_id: int, site_id: int | None) -> list[dict[str, Any]]:
    if site_id is not None:
        sites_service.get_site(conn, owner_id, site_id)
    query = select(*SURVEY_COLUMNS).join(sites, sites.c.id == surveys.c.site_id)
    query = query.where(sites.c.owner_id == owner_id).order_by(surveys.c.id)
    if site_id is not None:
        query = query.where(surveys.c.site_id == site_id)
    rows = [row._mapping for row in conn.execute(query)]
    counts = response_counts(conn, [row["id"] for row in rows])
    return [public_survey(conn, row, counts) for row in rows]


def _dump(definition: Mapping[str, Any]) -> str:
    return orjson.dumps(definition).decode()


def create_survey(conn: Connection, owner_id: int, body: Mapping[str, Any]) -> RowMapping:
    if "site_id" not in body:
        raise checks.invalid("site_id", "The field 'site_id' is required.", "missing_field")
    site_id = body["site_id"]
    if not is_id(site_id):
        raise checks.invalid("site_id", "The field 'site_id' is the id of one of your sites.")
    draft = checks.new_definition({key: value for key, value in body.items() if key != "site_id"})
    sites_service.get_site(conn, owner_id, site_id)
    now = utcnow()
    survey_id = conn.execute(
        insert(surveys)
        .values(site_id=site_id, draft_revision=1, created_at=now, updated_at=now)
        .returning(surveys.c.id)
    ).scalar_one()
    conn.execute(
        insert(survey_revisions).values(
            survey_id=survey_id, revision=1, definition=_dump(draft), created_at=now
        )
    )
    return get_survey(conn, owner_id, survey_id)


def _conflict() -> ApiError:
    return ApiError(409, "edit_conflict", "The survey changed while saving; load it again and retry.")


def update_survey(conn: Connection, owner_id: int, survey_id: int, body: Mapping[str, Any]) -> RowMapping:
    """Apply ``body`` to the pending draft, opening draft ``revision + 1`` when none is pending."""
    row = get_survey(conn, owner_id, survey_id)
    base = load_definition(conn, survey_id, latest_revision(row))
    changed = checks.check_changes(body, base, earlier_types(conn, survey_id))
    if changed == base:
        return row
    now = utcnow()
    draft = row["draft_revision"]
    if draft is None:
        draft = int(row["published_revision"]) + 1
        opened = conn.execute(
            update(surveys)
            .where(surveys.c.id == survey_id, surveys.c.draft_revision.is_(None))
            .values(draft_revision=draft, updated_at=now)
        )
        if opened.rowcount != 1:
            raise _conflict()
        conn.execute(
            insert(survey_revisions).values(
                survey_id=survey_id, revision=draft, definition=_dump(changed), created_at=now
            )
        )
    else:
        saved = conn.execute(
            update(survey_revisions)
            .where(
                survey_revisions.c.survey_id == survey_id,
                survey_revisions.c.revision == draft,
                survey_revisions.c.published_at.is_(None),
            )
            .values(definition=_dump(changed))
        )
        if saved.rowcount != 1:
            raise _conflict()
        conn.execute(update(surveys).where(surveys.c.id == survey_id).values(updated_at=now))
    return get_survey(conn, owner_id, survey_id)


def publish_survey(conn: Connection, owner_id: int, survey_id: int) -> RowMapping:
    """Freeze the pending draft as the published revision; also un-archives. Idempotent."""
    row = get_survey(conn, owner_id, survey_id)
    now = utcnow()
    draft = row["draft_revision"]
    if draft is not None:
        frozen = conn.execute(
            update(survey_revisions)
            .where(
                survey_revisions.c.survey_id == survey_id,
                survey_revisions.c.revision == draft,
                survey_revisions.c.published_at.is_(None),
            )
            .values(published_at=now)
        )
        moved = conn.execute(
            update(surveys)
            .where(surveys.c.id == survey_id, surveys.c.draft_revision == draft)
            .values(published_revision=draft, draft_revision=None, archived_at=None, updated_at=now)
        )
        if frozen.rowcount != 1 or moved.rowcount != 1:
            raise _conflict()
    elif row["archived_at"] is not None:
        conn.execute(
            update(surveys).where(surveys.c.id == survey_id).values(archived_at=None, updated_at=now)
        )
    return get_survey(conn, owner_id, survey_id)


def archive_survey(conn: Connection, owner_id: int, survey_id: int) -> RowMapping:
    """Stop showing the survey to visitors; its revisions and responses stay. Idempotent."""
    row = get_survey(conn, owner_id, survey_id)
    if row["archived_at"] is None:
        now = utcnow()
        conn.execute(update(surveys).where(surveys.c.id == survey_id).values(archived_at=now, updated_at=now))
    return get_survey(conn, owner_id, survey_id)


def get_revision(conn: Connection, owner_id: int, survey_id: int, revision: int) -> dict[str, Any]:
    """One revision's definition, published or the pending draft."""
    get_survey(conn, owner_id, survey_id)
    row = conn.execute(
        select(survey_revisions).where(
            survey_revisions.c.survey_id == survey_id, survey_revisions.c.revision == revision
        )
    ).first()
    if row is None:
        raise ApiError(404, "unknown_revision", "This survey has no revision with that number.")
    stored = orjson.loads(row.definition)
    return {
        "survey_id": survey_id,
        "revision": revision,
        "published": row.published_at is not None,
        "published_at": _iso(row.published_at),
        **stored,
    }
