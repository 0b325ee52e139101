"""One setting's declaration, and the commands that take settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ENV_PREFIX = "SIGHTLINE_"

SERVE = "serve"
OWNER = "create-owner"
MIGRATE = "migrate"
REBUILD = "rebuild-store"
BACKUP = "backup"
RESTORE = "restore"
ERASE = "erase-visitor"
EXPORT = "export-visitor"
COMPACT = "compact"
MCP = "mcp"
DB_COMMANDS = (SERVE, OWNER, MIGRATE, REBUILD, BACKUP, RESTORE, ERASE, EXPORT, COMPACT)


@dataclass(frozen=True)
class Setting:
    name: str
    type_name: str
    default: Any
    help: str
    parse: Callable[[str], Any]
    commands: tuple[str, ...] = (SERVE,)

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")
