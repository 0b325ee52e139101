"""Free space on the file systems Sightline writes to: a warning in health, a refusal in ingest.

``DiskGuard`` watches the data directory and, with SQLite, the database file's directory, and a
recordings directory of its own (``--recordings-url file://...``), each a volume of its own when
it is on another file system. Below ``--disk-warn-free-mb`` health's ``disk`` service
is ``degraded`` and names what uses the space; below ``--disk-refuse-free-mb`` it is ``down`` and
ingest refuses new events, recording chunks and survey answers with 507 (the SDK sends them again
later) instead of letting a write fail half-way. The free space is read at most once a second, on
the caller's thread (one ``statvfs``), so the check is cheap enough for ingest's hot path, and a
volume that has space again is used again within a second, with nothing to restart.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from sightline.database import Database
from sightline.health.registry import DEGRADED, DOWN, OK, ServiceReport

log = logging.getLogger("sightline.disk")

MIB = 1024 * 1024
CHECK_INTERVAL = 1.0  # seconds between two reads of a volume's free space
USAGE_TTL = 60.0  # seconds the walk that names what uses the space is reused
USAGE_MAX_ENTRIES = 200_000  # files visited per walk at most; beyond it the sizes are lower bounds
DATA, DATABASE, RECORDINGS = "data", "database", "recordings"
OUTSIDE = "outside the data directory"


@dataclass
class Volume:
    """One file system: the first of Sightline's directories on it names it."""

    path: Path
    free: int = 0
    total: int = 0
    low: bool = False
    checked: float = float("-inf")
    error: str | None = None


class DiskGuard:
    def __init__(
        self,
        data_dir: Path,
        database_file: Path | None,
        *,
        warn_bytes: int,
        refuse_bytes: int,
        recordings_dir: Path | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.database_file = database_file
        self.warn_bytes = warn_bytes
        self.refuse_bytes = refuse_bytes
        self.volumes: dict[str, Volume] = {DATA: Volume(data_dir)}
        if database_file is not None:
            folder = database_file.parent
            if _device(folder) != _device(data_dir):
                self.volumes[DATABASE] = Volume(folder)
        if recordings_dir is not None and _device(recordings_dir) != _device(data_dir):
            self.volumes[RECORDINGS] = Volume(recordings_dir)
        self._usage: tuple[float, dict[str, int]] | None = None
        self._usage_lock = threading.Lock()

    def refuses(self, role: str) -> bool:
        """Whether new data for ``role`` (``data``: files under the data directory; ``database``:
        rows of a SQLite database; ``recordings``: chunk files, wherever their directory is) must
        be refused now. PostgreSQL's and an object store's disks are their servers' concern."""
        if role == DATABASE and self.database_file is None:
            return False
        volume = self.volumes.get(role) or self.volumes[DATA]
        if time.monotonic() - volume.checked >= CHECK_INTERVAL:
            self._refresh(volume)
        return volume.low

    def _refresh(self, volume: Volume) -> None:
        volume.checked = time.monotonic()
        try:
            usage = shutil.disk_usage(volume.path)
        except OSError as exc:
            volume.error = f"{type(exc).__name__}: {exc.strerror or exc}"
            return
        volume.error = None
        volume.free, volume.total = usage.free, usage.total
        low = usage.free < self.refuse_bytes
        if low != volume.low:
            if low:
                log.error(
                    "disk: %s has %d MiB free, below --disk-refuse-free-mb (%d MiB); refusing new data",
                    volume.path,
                    usage.free // MIB,
                    self.refuse_bytes // MIB,
                )
            else:
                log.warning("disk: %s has %d MiB free again; taking new data", volume.path, usage.free // MIB)
        volume.low = low

    def figures(self) -> dict[str, Any]:
        """Per volume, for ``/metrics``: free and total bytes, whether data is refused."""
        for volume in self.volumes.values():
            self._refresh(volume)
        return {
            "free_bytes": {name: v.free for name, v in self.volumes.items()},
            "total_bytes": {name: v.total for name, v in self.volumes.items()},
            "low": {name: int(v.low) for name, v in self.volumes.items()},
        }

    def probe(self) -> ServiceReport:
        """Health's ``disk`` service: the tightest volume's figures, and when space runs short,
        what uses it and what to do."""
        for volume in self.volumes.values():
            self._refresh(volume)
        tightest = min(self.volumes.values(), key=lambda volume: volume.free)
        figures: dict[str, Any] = {
            "free_bytes": tightest.free,
            "total_bytes": tightest.total,
            "path": str(tightest.path),
            "warn_free_bytes": self.warn_bytes,
            "refuse_free_bytes": self.refuse_bytes,
            "refusing": [n for n, v in self.volumes.items() if v.low],
            "problem": None,
            "fix": None,
        }
        if len(self.volumes) > 1:
            figures["volumes"] = {
                n: {"path": str(v.path), "free_bytes": v.free} for n, v in self.volumes.items()
            }
        errors = [f"{v.path}: {v.error}" for v in self.volumes.values() if v.error]
        if errors:
            figures["problem"] = "The free space could not be read (" + "; ".join(errors) + ")."
            figures["fix"] = "Check that the data directory exists and is readable by Sightline."
            return ServiceReport(DOWN, figures)
        if tightest.free >= self.warn_bytes:
            return ServiceReport(OK, figures)
        figures["used_bytes"] = self.usage()
        biggest = ", ".join(f"{k} ({v // MIB} MiB)" for k, v in list(figures["used_bytes"].items())[:3])
        if tightest.low:
            figures["problem"] = (
                f"Only {tightest.free // MIB} MiB are free on {tightest.path}: new events, recordings and "
                f"survey answers are refused (507) until more than {self.refuse_bytes // MIB} MiB are free. "
                f"Largest here: {biggest}."
            )
        else:
            figures["problem"] = (
                f"Only {tightest.free // MIB} MiB are free on {tightest.path}; below "
                f"{self.refuse_bytes // MIB} MiB new data is refused. Largest here: {biggest}."
            )
        figures["fix"] = (
            "Free space or grow the disk; shorten --recording-retention-days if recordings take "
            "the space. Sightline takes data again by itself within a second once there is room."
        )
        return ServiceReport(DOWN if tightest.low else DEGRADED, figures)

    def usage(self) -> dict[str, int]:
        """Bytes under each entry of the data directory (and the SQLite files), and what the rest of
        its file system holds, largest first."""
        with self._usage_lock:
            if self._usage is not None and time.monotonic() - self._usage[0] < USAGE_TTL:
                return self._usage[1]
            sizes: dict[str, int] = {}
            budget = [USAGE_MAX_ENTRIES]
            try:
                entries = list(os.scandir(self.data_dir))
            except OSError:
                entries = []
            for entry in entries:
                sizes[entry.name] = _size(entry, budget)
            if self.database_file is not None and self.database_file.parent != self.data_dir:
                for suffix in ("", "-wal", "-shm"):
                    path = Path(f"{self.database_file}{suffix}")
                    if path.exists():
                        sizes[path.name] = path.stat().st_size
            volume = self.volumes[DATA]
            outside = volume.total - volume.free - sum(sizes.values())
            if outside > 0:  # other programs' files on the same file system
                sizes[OUTSIDE] = outside
            ordered = dict(sorted(sizes.items(), key=lambda item: -item[1]))
            self._usage = (time.monotonic(), ordered)
            return ordered


def _size(entry: os.DirEntry[str], budget: list[int]) -> int:
    """Bytes of a file, or of a directory's files, visiting at most ``budget[0]`` entries."""
    try:
        if not entry.is_dir(follow_symlinks=False):
            return entry.stat(follow_symlinks=False).st_blocks * 512
        total = 0
        stack = [entry.path]
        while stack and budget[0] > 0:
            with os.scandir(stack.pop()) as inner:
                for child in inner:
                    budget[0] -= 1
                    if child.is_dir(follow_symlinks=False):
                        stack.append(child.path)
                    else:
                        total += child.stat(follow_symlinks=False).st_blocks * 512
        return total
    except OSError:
        return 0


def _device(path: Path) -> int | None:
    path.mkdir(parents=True, exist_ok=True)
    try:
        return path.stat().st_dev
    except OSError:
        return None


def sqlite_file(database: Database) -> Path | None:
    """The SQLite database's file, whose file system the disk guard watches too."""
    if database.dialect != "sqlite":
        return None
    name = make_url(database.url).database
    return Path(name).resolve() if name and name != ":memory:" else None
