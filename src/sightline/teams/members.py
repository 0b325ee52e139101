"""Members of a team and invitations by one-time link.

The owner and admins invite people by e-mail address with a role (``admin`` or ``viewer``; a viewer
may be limited to some sites). The link carries a random token of which only the hash is stored;
whoever opens it chooses a password and becomes a member. Removing a member deletes their account,
which ends their sessions at once, and ends everything they made that grants access: their pending
invitations, their API keys and the shared links they made (``grants``: what the console lists
before the owner confirms). An invitation is accepted only while whoever made it is still the
owner or an admin of the team.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from sightline.accounts.tokens import new_token, token_hash
from sightline.accounts.users import create_user, email_problem, find_by_email, normalise_email
from sightline.database.schema import api_keys, invitations, members, sessions, shares, sites, users
from sightline.database.types import utcnow
from sightline.errors import ApiError
from sightline.numbers import is_id
from sightline.teams.principal import Principal

MEMBER_ROLES = ("admin", "viewer")


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def check_role(role: object) -> str:
    if role not in MEMBER_ROLES:
        raise ApiError(422, "invalid_role", "The role is admin or viewer.", field="role")
    return str(role)


def check_site_ids(conn: Connection, team_id: int, role: str, site_ids: object) -> list[int] | None:
    """The sites a viewer is given (None: every site); admins always see every site."""
    if site_ids is None:
        return None
    if role != "viewer":
        raise ApiError(422, "invalid_site_ids", "Only a viewer is limited to some sites.", field="site_ids")
    if not isinstance(site_ids, list) or not all(type(v) is int for v in site_ids) or len(site_ids) > 1000:
        raise ApiError(422, "invalid_site_ids", "site_ids is a list of site ids.", field="site_ids")
    wanted = sorted(set(site_ids))
    named = [v for v in wanted if is_id(v)]  # a larger number names no site
    found = set(
        conn.execute(select(sites.c.id).where(sites.c.owner_id == team_id, sites.c.id.in_(named))).scalars()
    )
    if missing := [v for v in wanted if v not in found]:
        raise ApiError(422, "unknown_site", f"No site with id {missing[0]} exists.", field="site_ids")
    return wanted


def invite(
    conn: Connection,
    by: Principal,
    email: object,
    role: object,
    site_ids: object,
    origin: str,
    lifetime: timedelta,
) -> dict[str, Any]:
    if not isinstance(email, str) or email_problem(normalise_email(email)):
        raise ApiError(
            422, "invalid_email", "Enter an e-mail address such as name@example.com.", field="email"
        )
    address = normalise_email(email)
    checked_role = check_role(role)
    sites_given = check_site_ids(conn, by.team_id, checked_role, site_ids)
    if find_by_email(conn, address) is not None:
        raise ApiError(409, "email_taken", "An account with that e-mail address exists.")
    # A new invitation for the same address replaces the older one (its link stops working).
    conn.execute(
        delete(invitations).where(invitations.c.team_id == by.team_id, invitations.c.email == address)
    )
    token = new_token()
    now = utcnow()
    row = conn.execute(
        insert(invitations)
        .values(
            team_id=by.team_id,
            email=address,
            role=checked_role,
            site_ids=sites_given,
            token_hash=token_hash(token),
            invited_by=by.user_id,
            created_at=now,
            expires_at=now + lifetime,
        )
        .returning(*invitations.c)
    ).one()
    return {**public_invitation(row._mapping), "url": invitation_url(origin, token)}


def invitation_url(origin: str, token: str) -> str:
    # The token travels in the fragment: browsers never send it to a server or in a Referer.
    return f"{origin}/invite#token={token}"


def public_invitation(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "email": row["email"],
        "role": row["role"],
        "site_ids": row["site_ids"],
        "created_at": row["created_at"].isoformat(),
        "expires_at": row["expires_at"].isoformat(),
    }


def list_invitations(conn: Connection, team_id: int) -> list[dict[str, Any]]:
    conn.execute(delete(invitations).where(invitations.c.expires_at <= utcnow()))
    rows = conn.execute(
        select(invitations).where(invitations.c.team_id == team_id).order_by(invitations.c.id)
    ).mappings()
    return [public_invitation(row) for row in rows]


def revoke_invitation(conn: Connection, team_id: int, invitation_id: int) -> None:
    gone = conn.execute(
        delete(invitations).where(invitations.c.id == invitation_id, invitations.c.team_id == team_id)
    ).rowcount
    if gone != 1:
        raise ApiError(404, "not_found", "No invitation with that id exists.")


def _valid_invitation(conn: Connection, token: object) -> Any:
    if not isinstance(token, str) or not token or len(token) > 200:
        raise _used_up()
    row = conn.execute(select(invitations).where(invitations.c.token_hash == token_hash(token))).first()
    if row is None or row.expires_at <= utcnow() or not _may_invite(conn, row.team_id, row.invited_by):
        raise _used_up()
    return row


def _may_invite(conn: Connection, team_id: int, user_id: int | None) -> bool:
    """Whether whoever made an invitation is still the team's owner or one of its admins."""
    if user_id is None or user_id == team_id:
        return True
    role = conn.execute(
        select(members.c.role).where(members.c.user_id == user_id, members.c.team_id == team_id)
    ).scalar_one_or_none()
    return role == "admin"


def _used_up() -> ApiError:
    return ApiError(
        404,
        "invalid_invitation",
        "This invitation link is used up, expired or wrong. Ask whoever invited you for a new one.",
    )


def describe_invitation(conn: Connection, token: object) -> dict[str, Any]:
    """What the accept page shows: who is invited, to whose team, with which role."""
    row = _valid_invitation(conn, token)
    owner = conn.execute(select(users.c.email).where(users.c.id == row.team_id)).scalar_one()
    return {"email": row.email, "role": row.role, "team": owner, "expires_at": row.expires_at.isoformat()}


def accept_invitation(conn: Connection, token: object, password: str) -> dict[str, Any]:
    """Create the invitee's account with their chosen password; the link is then used up."""
    row = _valid_invitation(conn, token)
    used = conn.execute(delete(invitations).where(invitations.c.id == row.id)).rowcount
    if used != 1:
        raise _used_up()
    # A refused password rolls the transaction back, so the link stays usable.
    user = create_user(conn, row.email, password)
    conn.execute(
        insert(members).values(
            user_id=user["id"],
            team_id=row.team_id,
            role=row.role,
            site_ids=row.site_ids,
            invited_by=row.invited_by,
            created_at=utcnow(),
        )
    )
    return user


def user_row(user_id: int) -> Any:
    """The query for a user's row as sessions give it (``id``, ``email``, ``created_at``)."""
    return select(users.c.id, users.c.email, users.c.created_at).where(users.c.id == user_id)


def list_members(conn: Connection, team_id: int) -> list[dict[str, Any]]:
    """The owner first, then the members in the order they joined, with their last activity."""
    seen = (
        select(sessions.c.user_id, func.max(sessions.c.last_seen_at).label("last_seen_at"))
        .group_by(sessions.c.user_id)
        .subquery()
    )
    query = (
        select(
            users.c.id,
            users.c.email,
            users.c.created_at,
            members.c.role,
            members.c.site_ids,
            seen.c.last_seen_at,
        )
        .outerjoin(members, members.c.user_id == users.c.id)
        .outerjoin(seen, seen.c.user_id == users.c.id)
        .where((users.c.id == team_id) | (members.c.team_id == team_id))
        .order_by((users.c.id != team_id), members.c.created_at, users.c.id)
    )
    found = [_public_member(row._mapping) for row in conn.execute(query)]
    for each in found:
        each["grants"] = None if each["role"] == "owner" else grants(conn, team_id, each["id"])
    return found


def _public_member(row: Any) -> dict[str, Any]:
    last = row["last_seen_at"]
    return {
        "id": row["id"],
        "email": row["email"],
        "role": row["role"] or "owner",
        "site_ids": row["site_ids"],
        "created_at": row["created_at"].isoformat(),
        "last_seen_at": last.isoformat() if last is not None else None,
    }


def _member_row(conn: Connection, team_id: int, user_id: int) -> Any:
    row = conn.execute(
        select(members).where(members.c.user_id == user_id, members.c.team_id == team_id)
    ).first()
    if row is None:
        if user_id == team_id:
            raise forbidden("The owner cannot be removed or changed.")
        raise ApiError(404, "not_found", "No member with that id exists.")
    return row


def update_member(conn: Connection, by: Principal, user_id: int, changes: dict[str, Any]) -> dict[str, Any]:
    row = _member_row(conn, by.team_id, user_id)
    role = check_role(changes["role"]) if "role" in changes else row.role
    if "site_ids" in changes:
        site_ids: Sequence[int] | None = check_site_ids(conn, by.team_id, role, changes["site_ids"])
    else:
        site_ids = row.site_ids if role == "viewer" else None
    conn.execute(update(members).where(members.c.user_id == user_id).values(role=role, site_ids=site_ids))
    return next(m for m in list_members(conn, by.team_id) if m["id"] == user_id)


def grants(conn: Connection, team_id: int, user_id: int) -> dict[str, int]:
    """What a member made that grants access and ends with them: pending invitations, API keys,
    shared links (counted, for the console to say before the owner removes them)."""
    team_sites = select(sites.c.id).where(sites.c.owner_id == team_id)
    counts = (
        select(func.count()).where(invitations.c.team_id == team_id, invitations.c.invited_by == user_id),
        select(func.count()).where(api_keys.c.team_id == team_id, api_keys.c.created_by == user_id),
        select(func.count()).where(shares.c.site_id.in_(team_sites), shares.c.created_by == user_id),
    )
    invited, keys, links = (int(conn.execute(query).scalar_one()) for query in counts)
    return {"invitations": invited, "api_keys": keys, "shares": links}


def remove_member(conn: Connection, by: Principal, user_id: int) -> None:
    """Delete the member's account, their sessions, and what they made that grants access: their
    pending invitations, API keys and shared links, in the same transaction."""
    _member_row(conn, by.team_id, user_id)
    team_sites = select(sites.c.id).where(sites.c.owner_id == by.team_id)
    conn.execute(
        delete(invitations).where(invitations.c.team_id == by.team_id, invitations.c.invited_by == user_id)
    )
    conn.execute(delete(api_keys).where(api_keys.c.team_id == by.team_id, api_keys.c.created_by == user_id))
    conn.execute(delete(shares).where(shares.c.site_id.in_(team_sites), shares.c.created_by == user_id))
    conn.execute(delete(sessions).where(sessions.c.user_id == user_id))
    conn.execute(delete(members).where(members.c.user_id == user_id))
    conn.execute(delete(users).where(users.c.id == user_id))
