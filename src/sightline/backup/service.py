"""``backup`` and ``restore``: the parts in order, the manifest, the checks before anything is touched."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sightline import __version__
from sightline.backup.manifest import FORMAT, NAME, VERSION, BackupError, Manifest, describe
from sightline.backup.parts import PARTS, DatabasePart, Place
from sightline.database.engines import known_revisions, open_database


def backup(place: Place, target: Path) -> Manifest:
    """Copy every part of the service at ``place`` into ``target`` (new or empty) and write the
    manifest last: a directory without one is an unfinished backup."""
    if target.exists() and any(target.iterdir()):
        raise BackupError(f"{target}: not empty; give a new directory for the backup")
    target.mkdir(parents=True, exist_ok=True)
    parts: list[dict[str, Any]] = []
    revisions: list[str] = []
    try:
        for part in PARTS:
            files = part.dump(place, target / part.name)
            if isinstance(part, DatabasePart):
                revisions = part.revisions(place, target / part.name)
            parts.append({"name": part.name, "files": describe(target, files)})
    except Exception:
        shutil.rmtree(target, ignore_errors=True)
        raise
    manifest = Manifest(
        {
            "format": FORMAT,
            "version": VERSION,
            "sightline": __version__,
            "created_at": datetime.now(UTC).isoformat(),
            "engine": place.engine,
            "schema": revisions,
            "parts": parts,
        }
    )
    manifest.write(target)
    return manifest


def restore(place: Place, source: Path) -> Manifest:
    """Check the backup whole, then restore every part into an empty ``place`` and migrate."""
    manifest = Manifest.read(source)
    manifest.verify(source)
    known = known_revisions()
    unknown = [r for r in manifest.data.get("schema", []) if r not in known]
    if unknown:
        raise BackupError(
            f"{source / NAME}: the backup's schema ({', '.join(unknown)}) is newer than this Sightline "
            f"({__version__}); restore it with the version that made it ({manifest.data.get('sightline')})"
        )
    for part in PARTS:
        if manifest.part(part.name) is None and part.required:
            raise BackupError(f"{source / NAME}: the part {part.name!r} is missing; the backup is damaged")
        busy = part.occupied(place)
        if busy:
            raise BackupError(f"cannot restore into a service that holds data: {busy}")
    engine = str(manifest.data.get("engine"))
    for part in PARTS:
        part.check(place, source / part.name, engine)
    for part in PARTS:
        part.restore(place, source / part.name, engine)
    open_database(place.database_url).dispose()  # an older backup's schema brought up to date
    return manifest
