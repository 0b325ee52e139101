"""The ``sightline`` command as an operator uses it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import waits


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    return subprocess.run(
        [sys.executable, "-m", "sightline.cli", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=waits.COMMAND,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_create_owner_takes_the_password_from_the_environment(database_url: str, tmp_path: Path) -> None:
    done = _run(
        "create-owner",
        "--email",
        "op@example.com",
        "--data-dir",
        str(tmp_path),
        "--database-url",
        database_url,
        env={"SIGHTLINE_OWNER_PASSWORD": "a long enough password"},
    )
    assert done.returncode == 0, done.stderr
    assert "created owner op@example.com" in done.stdout
    again = _run(
        "create-owner",
        "--email",
        "op@example.com",
        "--data-dir",
        str(tmp_path),
        "--database-url",
        database_url,
        env={"SIGHTLINE_OWNER_PASSWORD": "a long enough password"},
    )
    assert again.returncode == 1
    assert "exists" in again.stderr


def test_create_owner_without_a_password_and_without_a_terminal_explains_itself(tmp_path: Path) -> None:
    done = _run("create-owner", "--email", "op@example.com", "--data-dir", str(tmp_path))
    assert done.returncode == 2
    assert "SIGHTLINE_OWNER_PASSWORD" in done.stderr


def test_create_owner_refuses_a_weak_password(tmp_path: Path) -> None:
    done = _run(
        "create-owner",
        "--email",
        "op@example.com",
        "--data-dir",
        str(tmp_path),
        env={"SIGHTLINE_OWNER_PASSWORD": "short"},
    )
    assert done.returncode == 1
    assert "at least 10 characters" in done.stderr


def test_migrate_brings_the_schema_up_and_reports_the_revision(tmp_path: Path) -> None:
    done = _run("migrate", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "revision" in done.stdout
    assert (tmp_path / "sightline.db").exists()


def test_settings_come_from_the_environment_too(tmp_path: Path) -> None:
    done = _run("migrate", env={"SIGHTLINE_DATA_DIR": str(tmp_path / "from-env")})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "from-env" / "sightline.db").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "--port", "http"], "--port"),
        (["serve", "--public-url", "analytics.example.com"], "--public-url"),
        (["migrate", "--database-url", "mysql://x"], "--database-url"),
    ],
)
def test_a_bad_setting_stops_with_a_message_naming_it(args: list[str], message: str) -> None:
    done = _run(*args)
    assert done.returncode == 2
    assert message in done.stderr


def test_an_unreachable_database_is_reported_without_a_traceback(tmp_path: Path) -> None:
    done = _run("migrate", "--database-url", "postgresql://nobody@127.0.0.1:1/none")
    assert done.returncode == 1
    assert "cannot open the database" in done.stderr
    assert "Traceback" not in done.stderr


def test_every_command_prints_its_help_with_every_setting_it_takes() -> None:
    from sightline.settings import REGISTRY

    commands = sorted({command for setting in REGISTRY for command in setting.commands})
    assert "serve" in commands
    for command in commands:
        result = _run(command, "--help")
        assert result.returncode == 0, (command, result.stderr[-500:])
        taken = [setting.flag for setting in REGISTRY if command in setting.commands]
        assert all(flag in result.stdout for flag in taken), command
