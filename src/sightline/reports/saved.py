"""Saved funnels and saved segments of a site (named step lists and named filter sets): list,
create, edit, delete. A funnel's steps and a segment's filters are checked as the reports API
checks its parameters, so a saved one always runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection, Table, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from sightline.database.schema import sites
from sightline.database.tables.goals import funnels, segments
from sightline.database.types import utcnow
from sightline.errors import ApiError, not_found
from sightline.reports.filters import NAMES
from sightline.reports.params import parse_filter
from sightline.reports.steps import parse_step
from sightline.sites.service import get_site

NAME_MAX = 100
MAX_SAVED = 100
MIN_STEPS, MAX_STEPS = 2, 8


def invalid(field: str, message: str) -> ApiError:
    return ApiError(422, "invalid_field", message, field=field)


def check_steps(raw: object) -> list[str]:
    if not isinstance(raw, list) or not MIN_STEPS <= len(raw) <= MAX_STEPS:
        raise invalid("steps", f"The field 'steps' is a list of {MIN_STEPS} to {MAX_STEPS} steps.")
    out = []
    for index, item in enumerate(raw):
        if not isinstance(item, str):
            raise invalid(f"steps.{index}", f"The field 'steps.{index}' is page:/path or event:name.")
        try:
            out.append(parse_step(f"steps.{index}", item).label)
        except ApiError as error:
            raise invalid(f"steps.{index}", error.message) from None
    return out


def check_filters(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict) or not raw:
        raise invalid("filters", "The field 'filters' is an object of at least one report filter.")
    out = {}
    for name, value in raw.items():
        where = f"filters.{name}"
        if name not in NAMES:
            raise invalid(where, f"The filter '{name}' is not known; filters are {', '.join(NAMES)}.")
        if not isinstance(value, str):
            raise invalid(where, f"The field '{where}' is text, as the reports' filter parameter.")
        try:
            out[name] = parse_filter(name, value).raw()
        except ApiError as error:
            raise invalid(where, error.message) from None
    return out


@dataclass(frozen=True)
class Kind:
    table: Table
    noun: str
    payload: str  # the column and the API field
    check: Any


FUNNELS = Kind(funnels, "funnel", "steps", check_steps)
SEGMENTS = Kind(segments, "segment", "filters", check_filters)


def public(kind: Kind, row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "site_id": row["site_id"],
        "name": row["name"],
        kind.payload: orjson.loads(row[kind.payload]),
        "created_at": row["created_at"].isoformat(),
    }


def _name(raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip() or len(raw.strip()) > NAME_MAX:
        raise invalid("name", f"The field 'name' is text of 1 to {NAME_MAX} characters.")
    if any(ord(ch) < 32 for ch in raw):
        raise invalid("name", "The field 'name' may not contain control characters.")
    return raw.strip()


def _values(kind: Kind, body: object, current: dict[str, Any] | None = None) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise invalid("body", "The body is a JSON object.")
    for key in body:
        if key not in ("name", kind.payload):
            raise invalid(key, f"The field '{key}' is not known.")
    merged = {**(current or {}), **body}
    return {
        "name": _name(merged.get("name")),
        kind.payload: orjson.dumps(kind.check(merged.get(kind.payload))).decode(),
    }


def list_saved(kind: Kind, conn: Connection, owner_id: int, site_id: int) -> list[dict[str, Any]]:
    get_site(conn, owner_id, site_id)
    rows = conn.execute(select(kind.table).where(kind.table.c.site_id == site_id).order_by(kind.table.c.id))
    return [public(kind, row._mapping) for row in rows]


def get_saved(kind: Kind, conn: Connection, owner_id: int, item_id: int) -> Any:
    table = kind.table
    row = conn.execute(
        select(table)
        .join(sites, sites.c.id == table.c.site_id)
        .where(table.c.id == item_id, sites.c.owner_id == owner_id)
    ).first()
    if row is None:
        raise not_found(kind.noun)
    return row._mapping


def _duplicate(kind: Kind) -> ApiError:
    return ApiError(409, "duplicate", f"This site already has a {kind.noun} with that name.", field="name")


def _taken(kind: Kind, conn: Connection, site_id: int, name: str, item_id: int | None = None) -> bool:
    table = kind.table
    found = conn.execute(select(table.c.id).where(table.c.site_id == site_id, table.c.name == name)).scalar()
    return found is not None and found != item_id


def create_saved(kind: Kind, conn: Connection, owner_id: int, site_id: int, body: object) -> dict[str, Any]:
    get_site(conn, owner_id, site_id)
    values = _values(kind, body)
    table = kind.table
    existing = conn.execute(select(table.c.id).where(table.c.site_id == site_id)).all()
    if len(existing) >= MAX_SAVED:
        raise ApiError(
            422, "too_many", f"A site has at most {MAX_SAVED} saved {kind.noun}s; delete one first."
        )
    if _taken(kind, conn, site_id, values["name"]):
        raise _duplicate(kind)
    try:
        item_id = conn.execute(
            insert(table).values(site_id=site_id, created_at=utcnow(), **values).returning(table.c.id)
        ).scalar_one()
    except IntegrityError as error:
        raise _duplicate(kind) from error
    return public(kind, get_saved(kind, conn, owner_id, item_id))


def update_saved(kind: Kind, conn: Connection, owner_id: int, item_id: int, body: object) -> dict[str, Any]:
    current = public(kind, get_saved(kind, conn, owner_id, item_id))
    values = _values(kind, body, {"name": current["name"], kind.payload: current[kind.payload]})
    if _taken(kind, conn, current["site_id"], values["name"], item_id):
        raise _duplicate(kind)
    conn.execute(update(kind.table).where(kind.table.c.id == item_id).values(**values))
    return public(kind, get_saved(kind, conn, owner_id, item_id))


def delete_saved(kind: Kind, conn: Connection, owner_id: int, item_id: int) -> None:
    get_saved(kind, conn, owner_id, item_id)
    conn.execute(delete(kind.table).where(kind.table.c.id == item_id))
