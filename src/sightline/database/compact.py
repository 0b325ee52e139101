"""``sightline compact``: gives a SQLite database's free pages back to the file system, once.

A database created before Sightline made them with ``auto_vacuum=INCREMENTAL`` keeps the pages
that deleted events leave (``database.reclaim``): the file never shrinks. Only SQLite's
``VACUUM`` changes that: it rewrites the database into a temporary file, copies it back through
the WAL, and turns incremental auto-vacuum on, after which the store gives pages back by itself.
It needs the server stopped (the CLI holds the data directory's lock while it runs) and free
space for two copies of what the database holds (the temporary file, kept beside the database,
and the WAL), which is checked first. SQLite's VACUUM is atomic: interrupted, the database is
as it was.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from sightline.database.engines import Database
from sightline.database.reclaim import MIB, FreePages, free_pages

HEADROOM = 64 * MIB  # besides the two copies


class CompactError(Exception):
    """The database cannot be compacted now; the message says why and what to do."""


@dataclass(frozen=True)
class Compacted:
    path: Path
    seconds: float
    bytes_before: int  # the database file, its WAL and shared memory
    bytes_after: int
    before: FreePages
    after: FreePages

    def summary(self) -> str:
        given = max(0, self.bytes_before - self.bytes_after)
        return (
            f"compacted {self.path} in {self.seconds:.1f} s: {self.bytes_before / MIB:,.1f} MiB -> "
            f"{self.bytes_after / MIB:,.1f} MiB ({given / MIB:,.1f} MiB given back to the file system); "
            "auto-vacuum is incremental, so from now on the server gives the space deleted events "
            "leave back by itself"
        )


def files_bytes(path: Path) -> int:
    """The database file with its WAL and shared-memory files."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


def compact(db: Database, path: Path) -> Compacted:
    """VACUUM ``path`` (the server must be stopped) into an incremental auto-vacuum database."""
    before = free_pages(db)
    if before is None:
        raise CompactError("compact works on a SQLite database only")
    needed = 2 * (before.file_bytes - before.free_bytes) + HEADROOM
    free = shutil.disk_usage(path.parent).free
    if free < needed:
        raise CompactError(
            f"compacting needs about {needed // MIB} MiB free beside the database (two copies of "
            f"what it holds), and {path.parent} has {free // MIB} MiB; nothing was changed. Free "
            "space there first."
        )
    bytes_before = files_bytes(path)
    started = time.monotonic()
    raw = db.engine.raw_connection()
    try:
        sqlite = raw.driver_connection
        # The temporary copy goes beside the database (the space checked above), not to /var/tmp.
        sqlite.execute(f"PRAGMA temp_store_directory = '{str(path.parent).replace(chr(39), chr(39) * 2)}'")  # type: ignore[union-attr]
        sqlite.execute("PRAGMA auto_vacuum = INCREMENTAL")  # type: ignore[union-attr]
        sqlite.execute("VACUUM")  # type: ignore[union-attr]
        sqlite.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # type: ignore[union-attr]
    finally:
        raw.close()
    seconds = time.monotonic() - started
    after = free_pages(db)
    assert after is not None
    return Compacted(path, seconds, bytes_before, files_bytes(path), before, after)
