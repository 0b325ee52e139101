"""Keys made before scopes existed keep what they could do: reading reports and listing their sites."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import select, text

from sightline.accounts.tokens import token_hash
from sightline.database import Database, open_database
from sightline.database.schema import api_keys
from sightline.teams import keys


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_key_from_before_scopes_gets_stats_read_and_sites_read_and_still_authenticates(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if engine == "postgresql":
        database_url = request.getfixturevalue("postgres").create_database()
    else:
        database_url = f"sqlite:///{tmp_path / 'old.db'}"
    old = Database(database_url)
    try:
        with old.engine.begin() as conn:
            cfg = old.alembic_config()
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0017_teams_imports")  # the teams tables before scopes
            now = datetime.now(UTC).replace(tzinfo=None)
            conn.execute(
                text(
                    "INSERT INTO users (id, email, password_hash, created_at) "
                    "VALUES (1, 'o@example.com', 'x', :now)"
                ),
                {"now": now},
            )
            conn.execute(
                text(
                    "INSERT INTO api_keys (team_id, name, key_hash, prefix, created_at) "
                    "VALUES (1, 'old script', :hash, 'sl_abcdefg', :now)"
                ),
                {"hash": token_hash("sl_" + "k" * 43), "now": now},
            )
    finally:
        old.dispose()
    db = open_database(database_url)  # what the server does at start: every migration
    try:
        with db.begin() as conn:
            assert conn.execute(select(api_keys.c.scopes)).scalar_one() == ["stats:read", "sites:read"]
            who = keys.authenticate(conn, "sl_" + "k" * 43)
            assert who is not None
            assert who.scopes == {"stats:read", "sites:read"}
            assert keys.list_keys(conn, 1)[0]["scopes"] == ["stats:read", "sites:read"]
    finally:
        db.dispose()
