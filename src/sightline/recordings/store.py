"""Where chunk bytes live: the ``ChunkStore`` protocol and its directory implementation.

A store keeps opaque, already compressed chunk bodies addressed by (recording id, seq). ``put``
returns only once the bytes are durable, so the index row written after it never points at a
chunk that a crash could lose. Both stores lay chunks out alike, ``<id[:2]>/<id>/<seq>.json.gz``
(a backup holds that layout whichever store it came from): ``FileChunkStore`` as files under a
directory (``DATA_DIR/recordings`` or a directory several nodes share), ``s3.S3ChunkStore`` as
objects of an S3-compatible bucket. A store that cannot be reached raises
``StorageUnavailableError`` (an ``OSError``), which says what is wrong and what to do.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from sightline import locations
from sightline.datadir import fsync_path

RECORDING_ID = re.compile(r"\A[A-Za-z0-9_-]{16,64}\Z")
CHUNK_NAME = re.compile(r"\A(\d{8})\.json\.gz\Z")


class ChunkMissingError(Exception):
    """The index names a chunk the store does not hold."""


class StorageUnavailableError(OSError):
    """The store cannot be used now; ``problem`` says why and ``fix`` what to do (no secrets)."""

    def __init__(self, kind: str, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.kind = kind
        self.problem = problem
        self.fix = fix


def chunk_name(seq: int) -> str:
    return f"{seq:08d}.json.gz"


class ChunkStore(Protocol):
    kind: str  # "directory" or "s3", as health names it
    location: str  # the directory or s3://bucket/prefix/ (never a credential)

    def put(self, recording_id: str, seq: int, data: bytes) -> None:
        """Store ``data`` durably, replacing any earlier bytes under the same address."""

    def get(self, recording_id: str, seq: int) -> bytes:
        """The bytes stored by ``put``; ``ChunkMissingError`` when there are none."""

    def delete_recording(self, recording_id: str) -> None:
        """Remove every chunk of the recording (nothing to remove is no error)."""

    def delete_chunk(self, recording_id: str, seq: int) -> None:
        """Remove one chunk (nothing to remove is no error); an emptied recording goes too."""

    def recording_ids(self) -> Iterator[str]:
        """Every recording that has chunks in the store (for sweeping orphans)."""

    def modified(self, recording_id: str) -> float | None:
        """When a chunk of the recording was last written (epoch seconds); None when it has none."""

    def seqs(self, recording_id: str) -> list[int]:
        """The chunks the store holds for the recording, in order (for backups)."""

    def check(self) -> dict[str, object]:
        """Figures for health (free space, ...); ``StorageUnavailableError`` when it cannot be used."""


def open_store(recordings_url: str | None, data_dir: Path) -> ChunkStore:
    """The store ``--recordings-url`` names (``locations``): a directory or an S3-compatible bucket."""
    place = locations.parse(recordings_url)
    if isinstance(place, locations.Bucket):
        from sightline.recordings.s3 import S3ChunkStore  # boto3 loads only when a bucket is used

        return S3ChunkStore(place)
    return FileChunkStore(place.root(data_dir))


class FileChunkStore:
    """``ROOT/<id[:2]>/<id>/<seq>.json.gz``: written to a temporary file, fsynced, renamed into place."""

    kind = "directory"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)

    def directory(self, recording_id: str) -> Path:
        if not RECORDING_ID.match(recording_id):
            raise ValueError("not a recording id")
        return self.root / recording_id[:2] / recording_id

    def path(self, recording_id: str, seq: int) -> Path:
        return self.directory(recording_id) / chunk_name(seq)

    def put(self, recording_id: str, seq: int, data: bytes) -> None:
        final = self.path(recording_id, seq)
        folder = final.parent
        created = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{final.name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            temporary.unlink(missing_ok=True)
            raise
        os.close(fd)
        os.replace(temporary, final)
        fsync_path(folder)
        if created:
            fsync_path(folder.parent)
            fsync_path(self.root)

    def get(self, recording_id: str, seq: int) -> bytes:
        try:
            return self.path(recording_id, seq).read_bytes()
        except FileNotFoundError:
            raise ChunkMissingError(f"{recording_id}/{seq}") from None

    def delete_recording(self, recording_id: str) -> None:
        folder = self.directory(recording_id)
        shutil.rmtree(folder, ignore_errors=True)
        if folder.parent.exists():
            fsync_path(folder.parent)

    def delete_chunk(self, recording_id: str, seq: int) -> None:
        path = self.path(recording_id, seq)
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when no other chunk is left in it
        if path.parent.parent.exists():
            fsync_path(path.parent.parent)

    def recording_ids(self) -> Iterator[str]:
        if not self.root.is_dir():
            return
        for shard in sorted(self.root.iterdir()):
            if shard.is_dir():
                for folder in sorted(shard.iterdir()):
                    if folder.is_dir() and RECORDING_ID.match(folder.name):
                        yield folder.name

    def modified(self, recording_id: str) -> float | None:
        try:
            return self.directory(recording_id).stat().st_mtime
        except FileNotFoundError:
            return None

    def seqs(self, recording_id: str) -> list[int]:
        try:
            names = os.listdir(self.directory(recording_id))
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for m in map(CHUNK_NAME.match, names) if m)

    def check(self) -> dict[str, object]:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            free = shutil.disk_usage(self.root).free
            writable = os.access(self.root, os.W_OK | os.X_OK)
        except OSError as exc:
            raise StorageUnavailableError(
                "directory_unavailable",
                f"The recordings directory {self.root} cannot be used ({exc.strerror or exc}).",
                "Check that it exists (for a shared directory: that it is mounted on this node) and "
                "that the user Sightline runs as may write to it.",
            ) from None
        if not writable:
            raise StorageUnavailableError(
                "directory_read_only",
                f"Sightline may not write to the recordings directory {self.root}.",
                "Give the user Sightline runs as write access to it (or mount it read-write).",
            )
        return {"free_bytes": free}
