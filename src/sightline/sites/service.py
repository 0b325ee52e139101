"""Creating, listing and changing sites, and the public site record of the console API."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import available_timezones

import orjson
from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from sightline.autocapture import settings as autocapture
from sightline.database.schema import deleted_sites, sites
from sightline.database.types import utcnow
from sightline.errors import ApiError, not_found
from sightline.sites import referrers
from sightline.sites.domains import DomainError, normalise_domain
from sightline.sites.privacy import check_exclusions, check_retention, exclusions_of
from sightline.text import breaks_line

NAME_MAX = 100
# A site that sent events this recently counts as working whatever a connection check finds.
RECENT_TRAFFIC = timedelta(hours=24)
STATES = ("pending", "connected", "error", "disabled")


def new_key() -> str:
    return secrets.token_urlsafe(12)


def snippet(base_url: str, key: str) -> str:
    return f'<script defer src="{base_url}/analytics.js" data-site="{key}"></script>'


def check_name(raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ApiError(422, "invalid_name", "The site name is required.", field="name")
    name = raw.strip()
    if len(name) > NAME_MAX:
        raise ApiError(422, "invalid_name", f"The site name has at most {NAME_MAX} characters.", field="name")
    if breaks_line(name):
        raise ApiError(
            422,
            "invalid_name",
            "The site name may not contain control characters or line separators.",
            field="name",
        )
    return name


def check_domain(raw: object) -> str:
    try:
        return normalise_domain(raw)
    except DomainError as exc:
        raise ApiError(422, "invalid_domain", str(exc), field="domain") from None


@cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones()) - {"localtime", "posixrules", "Factory"}


def check_timezone(raw: object) -> str:
    """An IANA time zone name (``Europe/Berlin``, ``UTC``) that zoneinfo knows; reports use it."""
    if not isinstance(raw, str) or raw not in _zones():
        raise ApiError(
            422,
            "invalid_timezone",
            "The time zone must be an IANA name such as Europe/Berlin or UTC.",
            field="timezone",
        )
    return raw


# The first day of a site's weeks, and its weekday number (Monday 0).
WEEK_STARTS = {"monday": 0, "sunday": 6, "saturday": 5}


def check_week_start(raw: object) -> str:
    """The first day of the site's weeks: monday (the default), sunday or saturday."""
    if not isinstance(raw, str) or raw not in WEEK_STARTS:
        raise ApiError(
            422,
            "invalid_week_start",
            "The first day of the week must be monday, sunday or saturday.",
            field="week_start",
        )
    return raw


def connection_state(row: Any, now: datetime | None = None) -> str:
    """The site's connection state, derived from what is stored when it is read, so it ages.

    ``disabled`` when collection is off; ``connected`` while events arrived within RECENT_TRAFFIC
    (a failed check cannot see a local site or a page behind a login, so it does not outvote
    traffic; the failure still shows in ``last_check_error``); ``error`` when the last check failed
    and no event arrived since; ``connected`` after any event or a check that found the snippet;
    else ``pending``.
    """
    if not row["collection_enabled"]:
        return "disabled"
    last_event, checked, failed = row["last_event_at"], row["last_check_at"], row["last_check_error"]
    if last_event is not None and (now or utcnow()) - last_event < RECENT_TRAFFIC:
        return "connected"
    if failed and checked is not None and (last_event is None or checked >= last_event):
        return "error"
    if last_event is not None or checked is not None:
        return "connected"
    return "pending"


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def public_site(row: Any, base_url: str) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "domain": row["domain"],
        "key": row["key"],
        "snippet": snippet(base_url, row["key"]),
        "collection_enabled": bool(row["collection_enabled"]),
        "recording_enabled": bool(row["recording_enabled"]),
        "recording_sample_rate": float(row["recording_sample_rate"]),
        "timezone": row["timezone"],
        "week_start": row["week_start"],
        "cookieless": bool(row["cookieless"]),
        "excluded_addresses": exclusions_of(row["excluded_addresses"]),
        "retention_days": row["retention_days"],
        "blocked_referrers": referrers.blocked_of(row["blocked_referrers"]),
        "autocapture": autocapture.public(row),
        "created_at": _iso(row["created_at"]),
        "connection": {
            "state": connection_state(row),
            "first_event_at": _iso(row["first_event_at"]),
            "last_event_at": _iso(row["last_event_at"]),
            "last_check_at": _iso(row["last_check_at"]),
            "last_check_error": row["last_check_error"],
        },
    }


def list_sites(conn: Connection, owner_id: int) -> list[Any]:
    query = select(sites).where(sites.c.owner_id == owner_id).order_by(sites.c.created_at, sites.c.id)
    return [row._mapping for row in conn.execute(query)]


def get_site(conn: Connection, owner_id: int, site_id: int) -> Any:
    row = conn.execute(select(sites).where(sites.c.id == site_id, sites.c.owner_id == owner_id)).first()
    if row is None:
        raise not_found("site")
    return row._mapping


def create_site(conn: Connection, owner_id: int, name: object, domain: object) -> Any:
    values = {
        "owner_id": owner_id,
        "name": check_name(name),
        "domain": check_domain(domain),
        "key": new_key(),
        "collection_enabled": True,
        "recording_enabled": False,
        "recording_sample_rate": 1.0,
        "created_at": utcnow(),
        "connection_state": "pending",
    }
    if conn.execute(
        select(sites.c.id).where(sites.c.owner_id == owner_id, sites.c.domain == values["domain"])
    ).first():
        raise _duplicate()
    if conn.dialect.name == "sqlite":
        # SQLite hands out the highest id plus one, which may be a deleted site's: skip those.
        highest = select(func.max(sites.c.id)).union_all(select(func.max(deleted_sites.c.id))).subquery()
        values["id"] = int(conn.execute(select(func.coalesce(func.max(highest.c[0]), 0))).scalar_one()) + 1
    try:
        with conn.begin_nested():
            site_id = conn.execute(insert(sites).values(**values).returning(sites.c.id)).scalar_one()
    except IntegrityError:
        raise _duplicate() from None
    return get_site(conn, owner_id, site_id)


def _duplicate() -> ApiError:
    return ApiError(409, "site_exists", "You already have a site with this domain.", field="domain")


def update_site(conn: Connection, owner_id: int, site_id: int, changes: dict[str, Any]) -> Any:
    """Apply the validated ``changes`` (name, collection, recording, time zone, privacy,
    autocapture) to one site."""
    get_site(conn, owner_id, site_id)
    values: dict[str, Any] = {}
    if "name" in changes:
        values["name"] = check_name(changes["name"])
    for flag in ("collection_enabled", "recording_enabled"):
        if flag in changes:
            values[flag] = bool(changes[flag])
    if "recording_sample_rate" in changes:
        values["recording_sample_rate"] = float(changes["recording_sample_rate"])
    if "timezone" in changes:
        values["timezone"] = check_timezone(changes["timezone"])
    if "week_start" in changes:
        values["week_start"] = check_week_start(changes["week_start"])
    if "cookieless" in changes:
        values["cookieless"] = bool(changes["cookieless"])
    if "excluded_addresses" in changes:
        values["excluded_addresses"] = orjson.dumps(check_exclusions(changes["excluded_addresses"])).decode()
    if "retention_days" in changes:
        values["retention_days"] = check_retention(changes["retention_days"])
    if "blocked_referrers" in changes:
        values["blocked_referrers"] = orjson.dumps(
            referrers.check_blocked(changes["blocked_referrers"])
        ).decode()
    if "autocapture" in changes:
        values.update(autocapture.changes(changes["autocapture"]))
    if values:
        conn.execute(
            update(sites).where(sites.c.id == site_id, sites.c.owner_id == owner_id).values(**values)
        )
    return get_site(conn, owner_id, site_id)


def delete_site(conn: Connection, owner_id: int, site_id: int) -> None:
    """Delete one site and, through the foreign keys' cascades, everything stored about it in the
    database (events, report figures, recordings' index, surveys and their responses)."""
    get_site(conn, owner_id, site_id)
    conn.execute(delete(sites).where(sites.c.id == site_id, sites.c.owner_id == owner_id))
    conn.execute(insert(deleted_sites).values(id=site_id, deleted_at=utcnow()))


def record_check(conn: Connection, site_id: int, error: str | None, detail: str | None) -> None:
    """Store the outcome of a connection check; success means the snippet is on the page.

    The state is not stored: ``connection_state`` derives it from this outcome and the traffic.
    """
    values = {"last_check_at": utcnow(), "last_check_error": error, "last_check_detail": detail}
    conn.execute(update(sites).where(sites.c.id == site_id).values(**values))
