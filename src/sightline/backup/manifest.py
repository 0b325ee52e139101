"""``manifest.json``: what a backup holds and the checksums that prove it is whole."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "sightline-backup"
VERSION = 1
NAME = "manifest.json"
CHUNK = 1 << 20


class BackupError(Exception):
    """The backup cannot be made or restored; the message says why and names the file."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def describe(root: Path, files: list[Path]) -> list[dict[str, Any]]:
    return [
        {"path": f.relative_to(root).as_posix(), "bytes": f.stat().st_size, "sha256": sha256_of(f)}
        for f in sorted(files)
    ]


def refuse_links(root: Path) -> None:
    """A backup holds plain files and directories only: a symbolic link inside it (to a chunk, to
    another instance's database, to a directory) would bring in a file from outside it."""
    for top, directories, files in os.walk(root):  # never follows links
        for name in sorted(directories + files):
            path = Path(top) / name
            if path.is_symlink():
                raise BackupError(
                    f"{path}: a symbolic link (to {os.readlink(path)}); a backup holds plain files "
                    "only, refused"
                )


@dataclass
class Manifest:
    data: dict[str, Any]

    @classmethod
    def read(cls, root: Path) -> Manifest:
        refuse_links(root)
        path = root / NAME
        if not path.is_file():
            raise BackupError(f"{path}: missing; this is not a Sightline backup")
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BackupError(f"{path}: unreadable ({exc}); the backup is damaged") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BackupError(f"{path}: not a Sightline backup manifest (foreign backup)")
        if data.get("version") != VERSION:
            raise BackupError(
                f"{path}: backup format version {data.get('version')!r}; this Sightline reads {VERSION}"
            )
        if not isinstance(data.get("parts"), list):
            raise BackupError(f"{path}: no list of parts; the backup is damaged")
        return cls(data)

    def verify(self, root: Path) -> None:
        """Every file the manifest lists is there with its size and checksum; nothing is extra."""
        listed: set[str] = set()
        for part in self.data["parts"]:
            for entry in part.get("files", []):
                relative = str(entry["path"])
                if relative.startswith("/") or ".." in Path(relative).parts:
                    raise BackupError(f"{root / NAME}: a file outside the backup ({relative}); refused")
                listed.add(relative)
                path = root / relative
                if not path.is_file():
                    raise BackupError(f"{path}: missing from the backup")
                if path.stat().st_size != entry["bytes"] or sha256_of(path) != entry["sha256"]:
                    raise BackupError(f"{path}: does not match its checksum in {NAME}; the backup is damaged")
        for path in root.rglob("*"):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and relative != NAME and relative not in listed:
                raise BackupError(f"{path}: not listed in {NAME}; the backup was changed after it was made")

    def part(self, name: str) -> dict[str, Any] | None:
        for part in self.data["parts"]:
            if part.get("name") == name:
                found: dict[str, Any] = part
                return found
        return None

    def write(self, root: Path) -> None:
        path = root / NAME
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data, indent=2, sort_keys=True) + "\n", "utf-8")
        temporary.replace(path)
