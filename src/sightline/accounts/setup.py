"""One-time setup links: the first owner is created in the browser by whoever holds the token."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from sightline.accounts.tokens import new_token, token_hash
from sightline.accounts.users import count_users, create_user
from sightline.database.schema import setup_tokens
from sightline.database.types import utcnow
from sightline.errors import ApiError


def issue_setup_token(conn: Connection, lifetime: timedelta) -> str | None:
    """A fresh setup token when no owner exists yet (older tokens stop working); else None."""
    if count_users(conn) > 0:
        return None
    conn.execute(delete(setup_tokens))
    token = new_token()
    now = utcnow()
    conn.execute(
        insert(setup_tokens).values(token_hash=token_hash(token), created_at=now, expires_at=now + lifetime)
    )
    return token


def setup_token_valid(conn: Connection, token: str) -> bool:
    if not token or len(token) > 200:
        return False
    row = conn.execute(
        select(setup_tokens.c.expires_at).where(setup_tokens.c.token_hash == token_hash(token))
    ).first()
    return row is not None and row.expires_at > utcnow() and count_users(conn) == 0


def complete_setup(conn: Connection, token: str, email: str, password: str) -> dict[str, Any]:
    """Create the first owner with the setup token, which is then used up."""
    used = conn.execute(
        delete(setup_tokens).where(
            setup_tokens.c.token_hash == token_hash(token), setup_tokens.c.expires_at > utcnow()
        )
    ).rowcount
    if used != 1 or count_users(conn) > 0:
        raise ApiError(403, "invalid_setup_token", "This setup link is used up, expired or wrong.")
    # A refused e-mail or password rolls the whole transaction back, so the link stays usable.
    return create_user(conn, email, password)
