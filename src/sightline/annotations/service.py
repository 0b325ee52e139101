"""Annotations of an owner's sites in the SQL database: list, add, change, remove.

An annotation is ``{"date": "YYYY-MM-DD", "text": "..."}``: a day of the site's calendar and a
line of text. Every field is checked (422 naming it); an unknown site or note is 404.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from sightline.database.schema import sites
from sightline.database.tables.annotations import site_annotations as notes
from sightline.database.types import utcnow
from sightline.errors import ApiError, not_found
from sightline.sites.service import get_site

TEXT_MAX = 500
MAX_PER_SITE = 1000
FIELDS = ("date", "text")
FIRST_DAY = date(2000, 1, 1)
LAST_DAY = date(2099, 12, 31)
# Characters that end a line somewhere (e-mail, CSV, a terminal): a note is one line.
_LINE_BREAKS = {"\u0085", "\u2028", "\u2029"}


def _breaks_line(ch: str) -> bool:
    return ord(ch) < 32 or ord(ch) == 127 or ch in _LINE_BREAKS or 0xD800 <= ord(ch) <= 0xDFFF


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(422, "invalid_field", message, field=field)


def check_date(value: object, field: str = "date") -> date:
    """A day written ``YYYY-MM-DD`` between 2000 and 2099."""
    if not isinstance(value, str) or len(value) != 10:
        raise _invalid(field, f"Type the day as YYYY-MM-DD, for example {date.today().isoformat()}.")
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise _invalid(field, f"{value} is not a day of the calendar; type it as YYYY-MM-DD.") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise _invalid(field, "Pick a day between 2000-01-01 and 2099-12-31.")
    return day


def check_text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _invalid("text", "Write what happened that day, for example “Launched the new pricing page”.")
    text = value.strip()
    if len(text) > TEXT_MAX:
        raise _invalid("text", f"Keep the note to {TEXT_MAX} characters; it has {len(text)}.")
    if any(
        ord(ch) < 32 or ord(ch) == 127 or ch in _LINE_BREAKS or 0xD800 <= ord(ch) <= 0xDFFF for ch in text
    ):
        raise _invalid("text", "A note is one line of text, without line breaks or control characters.")
    return text


def _checked(body: object, partial: bool) -> dict[str, Any]:
    if not isinstance(body, Mapping):
        raise ApiError(422, "invalid_body", "Send a JSON object with the note's date and text.")
    for key in body:
        if key not in FIELDS:
            raise ApiError(
                422, "unknown_field", f"A note has only a date and a text, not '{key}'.", field=str(key)
            )
    values: dict[str, Any] = {}
    for field in FIELDS:
        if field not in body:
            if not partial:
                raise ApiError(422, "missing_field", f"A note needs its {field}.", field=field)
            continue
        values[field] = check_date(body[field]) if field == "date" else check_text(body[field])
    return values


def public(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "site_id": row["site_id"],
        "date": row["date"].isoformat(),
        "text": row["text"],
        "created_at": row["created_at"].isoformat(),
    }


def of_period(conn: Connection, site_id: int, first: date, last: date) -> list[dict[str, Any]]:
    """The site's notes from ``first`` to ``last`` (days, both included), by day (no owner check:
    the caller has one)."""
    query = (
        select(notes)
        .where(
            notes.c.site_id == site_id,
            notes.c.date >= first,
            notes.c.date <= last,
        )
        .order_by(notes.c.date, notes.c.id)
    )
    return [public(row._mapping) for row in conn.execute(query)]


def list_annotations(conn: Connection, owner_id: int, site_id: int) -> list[dict[str, Any]]:
    get_site(conn, owner_id, site_id)
    return of_period(conn, site_id, FIRST_DAY, LAST_DAY)


def get_annotation(conn: Connection, owner_id: int, annotation_id: int) -> Any:
    query = (
        select(notes)
        .join(sites, sites.c.id == notes.c.site_id)
        .where(notes.c.id == annotation_id, sites.c.owner_id == owner_id)
    )
    row = conn.execute(query).first()
    if row is None:
        raise not_found("note")
    return row._mapping


def create_annotation(conn: Connection, owner_id: int, site_id: int, body: object) -> dict[str, Any]:
    get_site(conn, owner_id, site_id)
    values = _checked(body, partial=False)
    held = conn.execute(select(func.count()).where(notes.c.site_id == site_id)).scalar_one()
    if held >= MAX_PER_SITE:
        raise ApiError(
            422, "too_many", f"A site keeps at most {MAX_PER_SITE} notes; remove an old one first."
        )
    note_id = conn.execute(
        insert(notes).values(site_id=site_id, created_at=utcnow(), **values).returning(notes.c.id)
    ).scalar_one()
    return public(get_annotation(conn, owner_id, note_id))


def update_annotation(conn: Connection, owner_id: int, annotation_id: int, body: object) -> dict[str, Any]:
    get_annotation(conn, owner_id, annotation_id)
    values = _checked(body, partial=True)
    if values:
        conn.execute(update(notes).where(notes.c.id == annotation_id).values(**values))
    return public(get_annotation(conn, owner_id, annotation_id))


def delete_annotation(conn: Connection, owner_id: int, annotation_id: int) -> None:
    get_annotation(conn, owner_id, annotation_id)
    conn.execute(delete(notes).where(notes.c.id == annotation_id))
