"""Owner records: create, look up, and the public shape ``{id, email, created_at}``."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from sightline.accounts.passwords import hash_password, password_problem
from sightline.database.schema import users
from sightline.database.types import utcnow
from sightline.errors import ApiError

_EMAIL = re.compile(r"\A[^@\s]{1,64}@[^@\s]+\.[^@\s]+\Z")


def normalise_email(email: str) -> str:
    return email.strip().lower()


def email_problem(email: str) -> str | None:
    if len(email) > 320 or not _EMAIL.match(email):
        return "Enter an e-mail address such as owner@example.com."
    return None


def create_user(conn: Connection, email: str, password: str) -> dict[str, Any]:
    email = normalise_email(email)
    if problem := email_problem(email):
        raise ApiError(422, "invalid_email", problem, field="email")
    if problem := password_problem(password):
        raise ApiError(422, "weak_password", problem, field="password")
    try:
        with conn.begin_nested():
            row = conn.execute(
                insert(users)
                .values(email=email, password_hash=hash_password(password), created_at=utcnow())
                .returning(users.c.id, users.c.email, users.c.created_at)
            ).one()
    except IntegrityError:
        raise ApiError(409, "email_taken", "An account with that e-mail address exists.") from None
    return public_user(row._mapping)


def find_by_email(conn: Connection, email: str) -> Any:
    return conn.execute(select(users).where(users.c.email == normalise_email(email))).first()


def find_by_id(conn: Connection, user_id: int) -> Any:
    return conn.execute(select(users).where(users.c.id == user_id)).first()


def count_users(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(users)).scalar_one())


def set_password_hash(conn: Connection, user_id: int, password_hash: str) -> None:
    conn.execute(update(users).where(users.c.id == user_id).values(password_hash=password_hash))


def public_user(row: Any) -> dict[str, Any]:
    return {"id": row["id"], "email": row["email"], "created_at": row["created_at"].isoformat()}
