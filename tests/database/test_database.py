"""Storage on SQLite and on a real PostgreSQL server: migrations, time handling, sessions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import inspect, select, text, update

from sightline.accounts.sessions import Lifetimes, end_session, resume_session, start_session
from sightline.accounts.setup import complete_setup, issue_setup_token, setup_token_valid
from sightline.accounts.users import create_user
from sightline.database import Database, open_database
from sightline.database.engines import normalise_url
from sightline.database.schema import sessions, setup_tokens, users
from sightline.errors import ApiError

LIFETIMES = Lifetimes(idle=timedelta(hours=1), absolute=timedelta(days=1))


def test_migrations_create_every_table_and_running_them_again_changes_nothing(db: Database) -> None:
    tables = set(inspect(db.engine).get_table_names())
    assert {"users", "sessions", "setup_tokens", "sites", "alembic_version"} <= tables
    before = db.current_revision()
    db.migrate()
    assert db.current_revision() == before


def test_sqlite_runs_in_wal_mode_with_full_sync(tmp_path: object) -> None:
    db = open_database(f"sqlite:///{tmp_path}/x.db")
    with db.read() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
        assert conn.execute(text("PRAGMA synchronous")).scalar_one() == 2  # FULL
        assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1
    db.dispose()


def test_postgres_urls_use_psycopg_3() -> None:
    assert normalise_url("postgresql://u:p@h:5432/d").startswith("postgresql+psycopg://u:p@h:5432/d")
    assert normalise_url("postgres://h/d").startswith("postgresql+psycopg://")


def test_timestamps_come_back_in_utc_whatever_zone_they_were_written_in(db: Database) -> None:
    paris = timezone(timedelta(hours=1))
    written = datetime(2026, 3, 1, 12, 30, tzinfo=paris)
    with db.begin() as conn:
        conn.execute(users.insert().values(email="tz@example.com", password_hash="x", created_at=written))
        read = conn.execute(select(users.c.created_at).where(users.c.email == "tz@example.com")).scalar_one()
    assert read == written
    assert read.tzinfo is not None
    assert read.utcoffset() == timedelta(0)


def test_naive_timestamps_are_refused(db: Database) -> None:
    with pytest.raises(Exception, match="timezone-aware"), db.begin() as conn:
        conn.execute(
            users.insert().values(email="n@example.com", password_hash="x", created_at=datetime(2026, 1, 1))
        )


def test_a_session_token_is_stored_only_as_a_hash(db: Database) -> None:
    with db.begin() as conn:
        user = create_user(conn, "s@example.com", "a long enough password")
        token = start_session(conn, user["id"], LIFETIMES)
        stored = conn.execute(select(sessions.c.token_hash)).scalars().all()
    assert token.encode() not in stored
    assert all(len(h) == 32 for h in stored)


def test_a_session_ends_when_idle_too_long_or_past_its_absolute_lifetime(db: Database) -> None:
    with db.begin() as conn:
        user = create_user(conn, "e@example.com", "a long enough password")
        idle = start_session(conn, user["id"], LIFETIMES)
        old = start_session(conn, user["id"], LIFETIMES)
        fresh = start_session(conn, user["id"], LIFETIMES)
        now = datetime.now(UTC)
        from sightline.accounts.tokens import token_hash

        conn.execute(
            update(sessions)
            .where(sessions.c.token_hash == token_hash(idle))
            .values(last_seen_at=now - timedelta(hours=2))
        )
        conn.execute(
            update(sessions)
            .where(sessions.c.token_hash == token_hash(old))
            .values(expires_at=now - timedelta(seconds=1))
        )
    with db.begin() as conn:
        assert resume_session(conn, idle, LIFETIMES) is None
        assert resume_session(conn, old, LIFETIMES) is None
        assert resume_session(conn, fresh, LIFETIMES).email == "e@example.com"
        end_session(conn, fresh)
        assert resume_session(conn, fresh, LIFETIMES) is None


def test_a_setup_token_works_once_and_not_after_it_expires(db: Database) -> None:
    with db.begin() as conn:
        expired = issue_setup_token(conn, timedelta(seconds=-1))
        assert expired is not None
        assert not setup_token_valid(conn, expired)
        token = issue_setup_token(conn, timedelta(minutes=5))
        assert token is not None
        assert not setup_token_valid(conn, expired)  # a new link retires the old one
        assert setup_token_valid(conn, token)
    with pytest.raises(ApiError) as weak, db.begin() as conn:
        complete_setup(conn, token, "first@example.com", "short")
    assert weak.value.status == 422
    with db.begin() as conn:
        assert setup_token_valid(conn, token)  # a refused password does not use the link up
        complete_setup(conn, token, "first@example.com", "a long enough password")
    with pytest.raises(ApiError) as used, db.begin() as conn:
        complete_setup(conn, token, "second@example.com", "a long enough password")
    assert used.value.status == 403
    with db.begin() as conn:
        assert issue_setup_token(conn, timedelta(minutes=5)) is None  # an owner exists now
        assert conn.execute(select(setup_tokens)).first() is None


def test_two_owners_cannot_share_an_email(db: Database) -> None:
    with db.begin() as conn:
        create_user(conn, "dup@example.com", "a long enough password")
    with pytest.raises(ApiError) as taken, db.begin() as conn:
        create_user(conn, "DUP@example.com", "another long password")
    assert taken.value.status == 409
