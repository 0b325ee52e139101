"""The one settings registry.

Every setting is declared once (name, type, default, help, which commands take it), in
``server.py`` (the HTTP server, accounts, mail) and ``data.py`` (data, ingest, the store); how each
kind of value is read is in ``values.py``. The CLI flags (``--data-dir``), the environment
variables (``SIGHTLINE_DATA_DIR``) and ``docs/settings.md`` all come from this registry. Imports
nothing from the rest of Sightline but ``locations`` (which reads ``--recordings-url``, and imports
nothing itself).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sightline.settings.data import DATA
from sightline.settings.server import SERVER
from sightline.settings.setting import (
    BACKUP,
    COMPACT,
    DB_COMMANDS,
    ENV_PREFIX,
    ERASE,
    EXPORT,
    MCP,
    MIGRATE,
    OWNER,
    REBUILD,
    RESTORE,
    SERVE,
    Setting,
)

__all__ = [
    "BACKUP",
    "BY_NAME",
    "COMPACT",
    "DB_COMMANDS",
    "ENV_PREFIX",
    "ERASE",
    "EXPORT",
    "MCP",
    "MIGRATE",
    "OWNER",
    "REBUILD",
    "REGISTRY",
    "RESTORE",
    "SERVE",
    "Setting",
    "Settings",
    "SettingsError",
    "load",
    "markdown_table",
]

REGISTRY: tuple[Setting, ...] = SERVER + DATA

BY_NAME: dict[str, Setting] = {s.name: s for s in REGISTRY}


@dataclass(frozen=True)
class Settings:
    """Resolved values of every setting in the registry."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def data_path(self) -> Path:
        return Path(self.values["data_dir"]).resolve()

    @property
    def console_origin(self) -> str:
        if self.values.get("public_url"):
            return str(self.values["public_url"])
        host = str(self.values["host"])
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        if host in {"0.0.0.0", "[::]"}:  # noqa: S104 - a listen address, not a place to reach
            host = "127.0.0.1"
        return f"http://{host}:{self.values['port']}"

    @property
    def secure_cookies(self) -> bool:
        return self.console_origin.startswith("https://")

    @property
    def effective_database_url(self) -> str:
        url = self.values.get("database_url")
        if url:
            return str(url)
        return f"sqlite:///{self.data_path / 'sightline.db'}"


class SettingsError(ValueError):
    """A setting's value could not be read; the message names the setting."""


def load(overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Resolve every setting: explicit overrides, then ``SIGHTLINE_*`` variables, then defaults."""
    env = os.environ if environ is None else environ
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    values: dict[str, Any] = {}
    for setting in REGISTRY:
        if setting.name in given:
            raw = given[setting.name]
            source = setting.flag
        elif setting.env in env and env[setting.env] != "":
            raw = env[setting.env]
            source = setting.env
        else:
            values[setting.name] = setting.default
            continue
        if isinstance(raw, str):
            try:
                values[setting.name] = setting.parse(raw)
            except ValueError as exc:
                raise SettingsError(f"{source}: {exc}") from None
        else:
            values[setting.name] = raw
    return Settings(values)


def markdown_table() -> str:
    """The settings table of ``docs/settings.md``; a test keeps the two in step."""
    lines = [
        "| Flag | Environment variable | Type | Default | Commands | Meaning |",
        "|---|---|---|---|---|---|",
    ]
    for setting in REGISTRY:
        default = "(see meaning)" if setting.default is None else f"`{str(setting.default).lower()}`"
        lines.append(
            f"| `{setting.flag}` | `{setting.env}` | {setting.type_name} | {default} | "
            f"{', '.join(setting.commands)} | {setting.help} |"
        )
    return "\n".join(lines)
