"""Server-side console sessions: a hashed token, idle expiry and absolute expiry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from sightline.accounts.tokens import new_token, token_hash
from sightline.database.schema import sessions, users
from sightline.database.types import utcnow

COOKIE_NAME = "sightline_session"
_TOUCH_EVERY = timedelta(seconds=60)


@dataclass(frozen=True)
class Lifetimes:
    idle: timedelta
    absolute: timedelta


def start_session(conn: Connection, user_id: int, lifetimes: Lifetimes) -> str:
    """Create a new session for ``user_id`` and return its token (shown to the client once)."""
    token = new_token()
    now = utcnow()
    conn.execute(
        insert(sessions).values(
            token_hash=token_hash(token),
            user_id=user_id,
            created_at=now,
            last_seen_at=now,
            expires_at=now + lifetimes.absolute,
        )
    )
    conn.execute(delete(sessions).where(sessions.c.expires_at < now))
    return token


def resume_session(conn: Connection, token: str, lifetimes: Lifetimes, *, write: bool = True) -> Any:
    """The signed-in user for ``token``, or None when it is unknown, idle too long or expired.

    ``write=False`` only reads (while the database cannot be written): nothing is deleted or touched.
    """
    if not token or len(token) > 200:
        return None
    digest = token_hash(token)
    row = conn.execute(
        select(sessions.c.last_seen_at, sessions.c.expires_at, users.c.id, users.c.email, users.c.created_at)
        .join(users, users.c.id == sessions.c.user_id)
        .where(sessions.c.token_hash == digest)
    ).first()
    if row is None:
        return None
    now = utcnow()
    if now >= row.expires_at or now - row.last_seen_at >= lifetimes.idle:
        if write:
            conn.execute(delete(sessions).where(sessions.c.token_hash == digest))
        return None
    if write and now - row.last_seen_at >= _TOUCH_EVERY:
        conn.execute(update(sessions).where(sessions.c.token_hash == digest).values(last_seen_at=now))
    return row


def end_session(conn: Connection, token: str) -> None:
    conn.execute(delete(sessions).where(sessions.c.token_hash == token_hash(token)))
