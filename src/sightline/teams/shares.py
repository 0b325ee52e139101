"""Shared dashboards: read-only links to one site's reports, optionally behind a password.

The link carries a random 256-bit token. It is kept as it is (not hashed) so the console can show
the link again; it grants only the site's reports. A password is stored as an Argon2id hash; a
visitor who gave it holds a cookie derived from the token and that hash (``unlock_proof``), so the
cookie stops working when the link is deleted or its password changes, and nothing is kept for it.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from sightline.accounts.passwords import hash_password, verify_password
from sightline.accounts.tokens import new_token
from sightline.database.schema import shares, sites
from sightline.database.types import utcnow
from sightline.errors import ApiError

COOKIE_PREFIX = "sightline_share_"


def share_url(origin: str, token: str) -> str:
    return f"{origin}/share/{token}"


def public_share(row: Any, origin: str) -> dict[str, Any]:
    viewed = row["last_viewed_at"]
    return {
        "id": row["id"],
        "site_id": row["site_id"],
        "url": share_url(origin, row["token"]),
        "password": row["password_hash"] is not None,
        "created_at": row["created_at"].isoformat(),
        "last_viewed_at": viewed.isoformat() if viewed is not None else None,
    }


def _site_of_team(conn: Connection, team_id: int, site_id: int) -> None:
    found = conn.execute(select(sites.c.id).where(sites.c.id == site_id, sites.c.owner_id == team_id)).first()
    if found is None:
        raise ApiError(404, "not_found", "No site with that id exists.")


def create_share(
    conn: Connection, team_id: int, user_id: int, site_id: int, password: str | None, origin: str
) -> dict[str, Any]:
    _site_of_team(conn, team_id, site_id)
    if password is not None and not 8 <= len(password) <= 1024:
        raise ApiError(
            422, "weak_password", "A shared link's password has at least 8 characters.", field="password"
        )
    row = conn.execute(
        insert(shares)
        .values(
            site_id=site_id,
            token=new_token(),
            password_hash=hash_password(password) if password is not None else None,
            created_by=user_id,
            created_at=utcnow(),
        )
        .returning(*shares.c)
    ).one()
    return public_share(row._mapping, origin)


def list_shares(conn: Connection, team_id: int, site_id: int, origin: str) -> list[dict[str, Any]]:
    _site_of_team(conn, team_id, site_id)
    rows = conn.execute(select(shares).where(shares.c.site_id == site_id).order_by(shares.c.id)).mappings()
    return [public_share(row, origin) for row in rows]


def revoke_share(conn: Connection, team_id: int, share_id: int) -> None:
    mine = select(sites.c.id).where(sites.c.owner_id == team_id)
    gone = conn.execute(delete(shares).where(shares.c.id == share_id, shares.c.site_id.in_(mine))).rowcount
    if gone != 1:
        raise ApiError(404, "not_found", "No shared link with that id exists.")


def find_share(conn: Connection, token: str) -> Any:
    """The link and its site (``site_id``, ``owner_id``, ``name``, ``domain``, ``timezone``), or None."""
    if not token or len(token) > 64:
        return None
    row = conn.execute(
        select(
            shares.c.id,
            shares.c.token,
            shares.c.password_hash,
            shares.c.last_viewed_at,
            sites.c.id.label("site_id"),
            sites.c.owner_id,
            sites.c.name,
            sites.c.domain,
            sites.c.timezone,
        )
        .join(sites, sites.c.id == shares.c.site_id)
        .where(shares.c.token == token)
    ).first()
    return row


def touch(conn: Connection, share_id: int) -> None:
    conn.execute(update(shares).where(shares.c.id == share_id).values(last_viewed_at=utcnow()))


def unlock_proof(share: Any) -> str:
    """The cookie value that shows a visitor gave the link's password."""
    key = str(share.password_hash).encode()
    return hmac.new(key, share.token.encode(), hashlib.sha256).hexdigest()


def is_unlocked(share: Any, cookie: str | None) -> bool:
    if share.password_hash is None:
        return True
    return cookie is not None and hmac.compare_digest(cookie, unlock_proof(share))


def password_matches(share: Any, password: str) -> bool:
    return share.password_hash is not None and verify_password(share.password_hash, password)
