from __future__ import annotations

import re
from pathlib import Path

import pytest

from sightline.settings import REGISTRY, SettingsError, load, markdown_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_every_setting_is_documented_exactly_as_the_registry_says() -> None:
    text = DOCS.read_text("utf-8")
    block = re.search(r"<!-- settings-table:start -->\n(.*?)\n<!-- settings-table:end -->", text, re.S)
    assert block is not None, "docs/settings.md lost its table markers"
    assert block.group(1) == markdown_table(), "run: .venv/bin/python scripts/docs_tables.py"
    for setting in REGISTRY:
        assert setting.env in text
        assert setting.flag in text


def test_a_flag_wins_over_the_environment_and_the_environment_over_the_default() -> None:
    assert load({}, environ={}).port == 8000
    assert load({}, environ={"SIGHTLINE_PORT": "9000"}).port == 9000
    assert load({"port": "9100"}, environ={"SIGHTLINE_PORT": "9000"}).port == 9100


def test_a_bad_value_names_the_setting_it_came_from() -> None:
    with pytest.raises(SettingsError, match="SIGHTLINE_PORT"):
        load({}, environ={"SIGHTLINE_PORT": "seventy"})
    with pytest.raises(SettingsError, match="--public-url"):
        load({"public_url": "ftp://example.com"}, environ={})


def test_the_console_origin_defaults_to_the_listen_address_and_follows_the_public_url() -> None:
    assert load({"port": "8123"}, environ={}).console_origin == "http://127.0.0.1:8123"
    settings = load({"public_url": "https://Analytics.Example.com/"}, environ={})
    assert settings.console_origin == "https://analytics.example.com"
    assert settings.secure_cookies is True


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--allow-private-addresses"], True),
        (["--allow-private-addresses", "false"], False),
        (["--allow-private-addresses=yes", "--ingest-accept-headless"], True),
        ([], False),
    ],
)
def test_a_boolean_flag_given_alone_means_true(args: list[str], expected: bool) -> None:
    from sightline.cli import _parser

    parsed = _parser().parse_args(["serve", *args, "--port", "8123"])
    settings = load({s.name: getattr(parsed, s.name, None) for s in REGISTRY}, environ={})
    assert settings.allow_private_addresses is expected
    assert settings.port == 8123
