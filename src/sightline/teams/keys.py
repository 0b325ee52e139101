"""API keys: created by an admin, shown once, stored only as a SHA-256 hash.

A key works on its team's sites, or on one site when it is made for it, and does what its scopes
allow (``scopes.py``: reading reports, reading or provisioning sites, sending events).
``authenticate`` finds the key of a bearer token and records when it was last used (at most once
a minute per key, so reading does not mean writing on every request); ``event_site`` gives an
``events:write`` key's site key for ingest (such a key is made for one site: refused at creation
without one).
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from sightline.accounts.tokens import token_hash
from sightline.database.schema import api_keys, sites
from sightline.database.types import utcnow
from sightline.errors import ApiError
from sightline.numbers import is_id
from sightline.teams import scopes as key_scopes
from sightline.teams.principal import Principal

PREFIX = "sl_"
_TOUCH_EVERY = timedelta(seconds=60)


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise ApiError(422, "invalid_name", "Give the key a name of 1 to 100 characters.", field="name")
    return name.strip()


def create_key(
    conn: Connection, by: Principal, name: object, site_id: object, scopes: object = None
) -> dict[str, Any]:
    checked = check_name(name)
    allowed = key_scopes.check_scopes(scopes)
    if site_id is not None:
        if type(site_id) is not int:
            raise ApiError(422, "invalid_site_id", "site_id is a site's id or null.", field="site_id")
        found = (
            conn.execute(
                select(sites.c.id).where(sites.c.id == site_id, sites.c.owner_id == by.team_id)
            ).first()
            if is_id(site_id)
            else None
        )
        if found is None:
            raise ApiError(422, "unknown_site", f"No site with id {site_id} exists.", field="site_id")
    elif key_scopes.EVENTS_WRITE in allowed:
        # Events name no site of their own: a key for every site could send to none of them.
        raise ApiError(
            422,
            "site_required",
            "A key with the events:write scope sends events to one site: give its site_id.",
            field="site_id",
        )
    key = new_key()
    row = conn.execute(
        insert(api_keys)
        .values(
            team_id=by.team_id,
            name=checked,
            site_id=site_id,
            scopes=list(allowed),
            key_hash=token_hash(key),
            prefix=key[:10],
            created_by=by.user_id,
            created_at=utcnow(),
        )
        .returning(*api_keys.c)
    ).one()
    return {**public_key(row._mapping), "key": key}


def public_key(row: Any) -> dict[str, Any]:
    last = row["last_used_at"]
    return {
        "id": row["id"],
        "name": row["name"],
        "site_id": row["site_id"],
        "scopes": list(key_scopes.stored_scopes(row["scopes"])),
        "prefix": row["prefix"],
        "created_at": row["created_at"].isoformat(),
        "last_used_at": last.isoformat() if last is not None else None,
    }


def list_keys(conn: Connection, team_id: int) -> list[dict[str, Any]]:
    rows = conn.execute(select(api_keys).where(api_keys.c.team_id == team_id).order_by(api_keys.c.id))
    return [public_key(row._mapping) for row in rows]


def revoke_key(conn: Connection, team_id: int, key_id: int) -> None:
    gone = conn.execute(
        delete(api_keys).where(api_keys.c.id == key_id, api_keys.c.team_id == team_id)
    ).rowcount
    if gone != 1:
        raise ApiError(404, "not_found", "No API key with that id exists.")


def authenticate(conn: Connection, key: str) -> Principal | None:
    """The principal a bearer key acts as (on its site or sites, with its scopes), or None."""
    if not key.startswith(PREFIX) or len(key) > 200:
        return None
    row = conn.execute(select(api_keys).where(api_keys.c.key_hash == token_hash(key))).first()
    if row is None:
        return None
    now = utcnow()
    if row.last_used_at is None or now - row.last_used_at >= _TOUCH_EVERY:
        conn.execute(update(api_keys).where(api_keys.c.id == row.id).values(last_used_at=now))
    site_ids = frozenset({row.site_id}) if row.site_id is not None else None
    return Principal(
        user_id=0,
        email="",
        created_at=None,
        role="api_key",
        team_id=row.team_id,
        site_ids=site_ids,
        key_id=row.id,
        scopes=frozenset(key_scopes.stored_scopes(row.scopes)),
    )


def event_site(conn: Connection, who: Principal) -> str | None:
    """The public key of the one site an ``events:write`` key sends events to (None: a key made
    for every site, which names no site to send to)."""
    if who.site_ids is None or len(who.site_ids) != 1:
        return None
    (site_id,) = who.site_ids
    found: str | None = conn.execute(
        select(sites.c.key).where(sites.c.id == site_id, sites.c.owner_id == who.team_id)
    ).scalar()
    return found
