"""Where chunk bytes live: the ``ChunkStore`` protocol and its filesystem implementation.

A store keeps opaque, already compressed chunk bodies addressed by (recording id, seq). ``put``
returns only once the bytes are durable, so the index row written after it never points at a
chunk that a crash could lose. An S3-compatible object store can implement the same four methods
(``put`` = PutObject, ``get`` = GetObject, ``delete_recording`` = delete the prefix).
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

RECORDING_ID = re.compile(r"\A[A-Za-z0-9_-]{16,64}\Z")


class ChunkMissingError(Exception):
    """The index names a chunk the store does not hold."""


class ChunkStore(Protocol):
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


class FileChunkStore:
    """``ROOT/<id[:2]>/<id>/<seq>.json.gz``: written to a temporary file, fsynced, renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def directory(self, recording_id: str) -> Path:
        if not RECORDING_ID.match(recording_id):
            raise ValueError("not a recording id")
        return self.root / recording_id[:2] / recording_id

    def path(self, recording_id: str, seq: int) -> Path:
        return self.directory(recording_id) / f"{seq:08d}.json.gz"

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
        _fsync_dir(folder)
        if created:
            _fsync_dir(folder.parent)
            _fsync_dir(self.root)

    def get(self, recording_id: str, seq: int) -> bytes:
        try:
            return self.path(recording_id, seq).read_bytes()
        except FileNotFoundError:
            raise ChunkMissingError(f"{recording_id}/{seq}") from None

    def delete_recording(self, recording_id: str) -> None:
        folder = self.directory(recording_id)
        shutil.rmtree(folder, ignore_errors=True)
        if folder.parent.exists():
            _fsync_dir(folder.parent)

    def delete_chunk(self, recording_id: str, seq: int) -> None:
        path = self.path(recording_id, seq)
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when no other chunk is left in it
        if path.parent.parent.exists():
            _fsync_dir(path.parent.parent)

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

    def free_bytes(self) -> int:
        self.root.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(self.root).free


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
