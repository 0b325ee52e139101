"""Goals of an owner's sites in the SQL database: list, create, edit, delete."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from sightline.database.schema import sites
from sightline.database.tables.goals import goals
from sightline.database.types import utcnow
from sightline.errors import ApiError, not_found
from sightline.goals.definition import check_goal, merged, public
from sightline.sites.service import get_site

MAX_GOALS = 100


def _duplicate() -> ApiError:
    return ApiError(409, "duplicate", "This site already has a goal with that name.", field="name")


def rows_of(conn: Connection, site_id: int) -> list[Any]:
    """The site's goals, oldest first (no owner check: the caller has one)."""
    query = select(goals).where(goals.c.site_id == site_id).order_by(goals.c.id)
    return [row._mapping for row in conn.execute(query)]


def list_goals(conn: Connection, owner_id: int, site_id: int) -> list[dict[str, Any]]:
    get_site(conn, owner_id, site_id)
    return [public(row) for row in rows_of(conn, site_id)]


def get_goal(conn: Connection, owner_id: int, goal_id: int) -> Any:
    query = (
        select(goals)
        .join(sites, sites.c.id == goals.c.site_id)
        .where(goals.c.id == goal_id, sites.c.owner_id == owner_id)
    )
    row = conn.execute(query).first()
    if row is None:
        raise not_found("goal")
    return row._mapping


def _taken(conn: Connection, site_id: int, name: str, goal_id: int | None = None) -> bool:
    query = select(goals.c.id).where(goals.c.site_id == site_id, goals.c.name == name)
    found = conn.execute(query).scalar()
    return found is not None and found != goal_id


def create_goal(conn: Connection, owner_id: int, site_id: int, body: object) -> dict[str, Any]:
    get_site(conn, owner_id, site_id)
    values = check_goal(body)
    if len(rows_of(conn, site_id)) >= MAX_GOALS:
        raise ApiError(422, "too_many", f"A site has at most {MAX_GOALS} goals; delete one first.")
    if _taken(conn, site_id, values["name"]):
        raise _duplicate()
    try:
        goal_id = conn.execute(
            insert(goals).values(site_id=site_id, created_at=utcnow(), **values).returning(goals.c.id)
        ).scalar_one()
    except IntegrityError as error:  # a concurrent request took the name
        raise _duplicate() from error
    return public(get_goal(conn, owner_id, goal_id))


def update_goal(conn: Connection, owner_id: int, goal_id: int, body: object) -> dict[str, Any]:
    current = get_goal(conn, owner_id, goal_id)
    values = check_goal(merged(current, body))
    if _taken(conn, current["site_id"], values["name"], goal_id):
        raise _duplicate()
    conn.execute(update(goals).where(goals.c.id == goal_id).values(**values))
    return public(get_goal(conn, owner_id, goal_id))


def delete_goal(conn: Connection, owner_id: int, goal_id: int) -> None:
    get_goal(conn, owner_id, goal_id)
    conn.execute(delete(goals).where(goals.c.id == goal_id))
