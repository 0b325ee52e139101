"""A visitor's data rights: erase everything stored about one visitor code, or export it as JSON.

Erasure removes, for one site and visitor code: the visitor's events from the durable log
(``events``), their recordings (index rows, then the chunk files on disk), their survey
responses, and asks the analytics store to drop its copy (a ``store_tasks`` row of kind
``erase_visitor``, which the store applies). The erasure itself is recorded in ``erasures``
(who asked, when, how much was removed, the store task's id) without the visitor's code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, delete, func, insert, select, tuple_

from sightline.database import Database
from sightline.database.tables.events import events
from sightline.database.tables.privacy import ERASE_VISITOR, erasures, store_tasks
from sightline.database.tables.recordings import recordings
from sightline.database.tables.surveys import survey_responses, surveys
from sightline.database.types import utcnow
from sightline.errors import ApiError
from sightline.recordings.service import Recordings

VISITOR_ID = re.compile(r"\A[^\x00-\x1f\x7f]{1,200}\Z")
EXPORT_EVENTS = 100_000  # events in one export (the newest are cut when a visitor has more)


def check_visitor_id(value: str) -> str:
    if not VISITOR_ID.match(value):
        raise ApiError(
            422, "invalid_field", "A visitor code is 1 to 200 printable characters.", field="visitor_id"
        )
    return value


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _responses_of(site_id: int, visitor_id: str) -> Any:
    mine = select(surveys.c.id).where(surveys.c.site_id == site_id)
    return (survey_responses.c.survey_id.in_(mine)) & (survey_responses.c.visitor_id == visitor_id)


def erase(
    db: Database, recordings_service: Recordings, site_id: int, visitor_id: str, requested_by: int | None
) -> dict[str, Any]:
    """Remove everything of ``visitor_id`` on ``site_id``; returns the erasure record."""
    started = utcnow()
    with db.begin() as conn:
        recording_ids = [
            str(r)
            for r in conn.execute(
                select(recordings.c.id).where(
                    recordings.c.site_id == site_id, recordings.c.visitor_id == visitor_id
                )
            ).scalars()
        ]
        removed_events = conn.execute(
            delete(events).where(events.c.site_id == site_id, events.c.visitor_id == visitor_id)
        ).rowcount
        removed_responses = conn.execute(
            delete(survey_responses).where(_responses_of(site_id, visitor_id))
        ).rowcount
        task_id = conn.execute(
            insert(store_tasks)
            .values(site_id=site_id, kind=ERASE_VISITOR, visitor_id=visitor_id, created_at=started)
            .returning(store_tasks.c.id)
        ).scalar_one()
        erasure_id = conn.execute(
            insert(erasures)
            .values(
                site_id=site_id,
                requested_by=requested_by,
                status="done",
                created_at=started,
                events_removed=int(removed_events or 0),
                responses_removed=int(removed_responses or 0),
                recordings_removed=len(recording_ids),
                store_task_id=task_id,
            )
            .returning(erasures.c.id)
        ).scalar_one()
    recordings_service.delete(recording_ids)  # index rows, then the files on disk
    with db.begin() as conn:
        conn.execute(erasures.update().where(erasures.c.id == erasure_id).values(finished_at=utcnow()))
        return get_erasure(conn, site_id, int(erasure_id))


def get_erasure(conn: Connection, site_id: int, erasure_id: int) -> dict[str, Any]:
    row = conn.execute(
        select(erasures, store_tasks.c.done_at.label("store_done_at"))
        .outerjoin(store_tasks, store_tasks.c.id == erasures.c.store_task_id)
        .where(erasures.c.id == erasure_id, erasures.c.site_id == site_id)
    ).first()
    if row is None:
        raise ApiError(404, "not_found", "No such erasure.")
    return public_erasure(row._mapping)


def list_erasures(conn: Connection, site_id: int, offset: int = 0, limit: int = 50) -> list[dict[str, Any]]:
    rows = conn.execute(
        select(erasures, store_tasks.c.done_at.label("store_done_at"))
        .outerjoin(store_tasks, store_tasks.c.id == erasures.c.store_task_id)
        .where(erasures.c.site_id == site_id)
        .order_by(erasures.c.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return [public_erasure(r._mapping) for r in rows]


def public_erasure(row: Any) -> dict[str, Any]:
    return {
        "id": int(row["id"]),
        "site_id": int(row["site_id"]),
        "status": row["status"],
        "requested_by": row["requested_by"],
        "created_at": _iso(row["created_at"]),
        "finished_at": _iso(row["finished_at"]),
        "events_removed": int(row["events_removed"]),
        "recordings_removed": int(row["recordings_removed"]),
        "responses_removed": int(row["responses_removed"]),
        # The analytics store drops its copy on its own schedule: pending until it has.
        "store": "done" if row["store_done_at"] is not None or row["store_task_id"] is None else "pending",
    }


EXPORT_PAGE = 1000  # events read and sent at a time: an export's memory is one page, not the whole


def export(db: Database, site_id: int, visitor_id: str) -> dict[str, Any]:
    """Everything stored about ``visitor_id`` on ``site_id``, for an access request (as one
    value: the CLI's; the API streams ``export_stream``)."""
    found: dict[str, Any] = orjson.loads(b"".join(export_stream(db, site_id, visitor_id)))
    return found


def export_stream(db: Database, site_id: int, visitor_id: str) -> Iterator[bytes]:
    """The export as JSON, a page of events at a time (oldest first, at most ``EXPORT_EVENTS``),
    so however many events a visitor has, the server holds one page of them per export."""
    mine = (events.c.site_id == site_id) & (events.c.visitor_id == visitor_id)
    with db.read() as conn:
        total = int(conn.execute(select(func.count()).select_from(events).where(mine)).scalar_one())
        found_recordings = [
            {
                "id": r.id,
                "session_id": r.session_id,
                "started_at": _iso(r.started_at),
                "pages": int(r.pages),
                "size_bytes": int(r.size_bytes),
            }
            for r in conn.execute(
                select(recordings).where(
                    recordings.c.site_id == site_id, recordings.c.visitor_id == visitor_id
                )
            )
        ]
    head = {
        "site_id": site_id,
        "visitor_id": visitor_id,
        "exported_at": utcnow().isoformat(),
        "events_total": total,
        "events_truncated": total > EXPORT_EVENTS,
    }
    yield orjson.dumps(head)[:-1] + b',"events":['
    yield from _event_pages(db, mine)
    yield b'],"recordings":' + orjson.dumps(found_recordings) + b',"survey_responses":['
    yield from _response_pages(db, site_id, visitor_id)
    yield b"]}"


def _event_pages(db: Database, mine: Any) -> Iterator[bytes]:
    columns = [c for c in events.columns if c.name not in {"site_id", "visitor_id", "batch_id"}]
    after: tuple[Any, Any] | None = None
    sent = 0
    while sent < EXPORT_EVENTS:
        query = select(*columns).where(mine)
        if after is not None:
            query = query.where(tuple_(events.c.time, events.c.id) > tuple_(*after))
        query = query.order_by(events.c.time, events.c.id).limit(min(EXPORT_PAGE, EXPORT_EVENTS - sent))
        with db.read() as conn:
            rows = [r._mapping for r in conn.execute(query)]
        if not rows:
            return
        yield (b"," if sent else b"") + b",".join(orjson.dumps(_event(r)) for r in rows)
        sent += len(rows)
        after = (rows[-1]["time"], rows[-1]["id"])


def _response_pages(db: Database, site_id: int, visitor_id: str) -> Iterator[bytes]:
    after = 0
    sent = False
    while True:
        with db.read() as conn:
            rows = conn.execute(
                select(survey_responses)
                .where(_responses_of(site_id, visitor_id), survey_responses.c.id > after)
                .order_by(survey_responses.c.id)
                .limit(EXPORT_PAGE)
            ).all()
        if not rows:
            return
        page = [
            {
                "id": int(r.id),
                "survey_id": int(r.survey_id),
                "revision": int(r.revision),
                "page_path": r.page_path,
                "answers": orjson.loads(r.answers),
                "submitted_at": _iso(r.submitted_at),
            }
            for r in rows
        ]
        yield (b"," if sent else b"") + b",".join(orjson.dumps(item) for item in page)
        sent = True
        after = int(rows[-1].id)


def _event(row: Any) -> dict[str, Any]:
    out = {str(k): v for k, v in row.items() if v is not None}
    out["time"] = _iso(row["time"])
    if row["props"]:
        out["props"] = orjson.loads(row["props"])
    return out
