"""The data directory belongs to one ``sightline serve`` at a time.

Two servers on one ``--data-dir`` race on the same SQLite file, recording chunks and analytics
store files; the attack pass lost acknowledged recording chunks that way. ``claim`` takes an
exclusive ``flock`` on ``DATA_DIR/sightline.lock`` for the life of the process (the kernel frees it
when the process dies, also by SIGKILL) and refuses clearly when another process holds it, or when
the directory cannot be written, before anything in it is touched. ``fsync_path`` makes a write or
a rename in it last. Imports nothing else.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

LOCK_NAME = "sightline.lock"


class DataDirError(Exception):
    """The data directory cannot be used; the message says why and what to do."""


class DataDirLock:
    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None


def _holder(lock_file: Path) -> str:
    try:
        text = lock_file.read_text("ascii", errors="replace").strip()
    except OSError:
        return ""
    return f" (process {text})" if text.isascii() and text.isdigit() else ""


def claim(directory: Path) -> DataDirLock:
    """Lock ``directory`` for this process; ``DataDirError`` when another one has it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(
            f"cannot create the data directory {directory}: {exc.strerror}. "
            "Create it and let the user running Sightline write to it."
        ) from None
    if os.statvfs(directory).f_flag & os.ST_RDONLY:  # root too: access() alone says so for root
        raise DataDirError(
            f"the data directory {directory} is on a read-only file system; nothing was changed. "
            "Mount it read-write (or choose another --data-dir)."
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise DataDirError(
            f"the data directory {directory} is not writable by this user; nothing was changed. "
            "Give the user running Sightline write access to it (or choose another --data-dir)."
        )
    lock_file = directory / LOCK_NAME
    try:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise DataDirError(f"cannot open {lock_file}: {exc.strerror}; nothing was changed.") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise DataDirError(
                f"another Sightline server is already using the data directory {directory}"
                f"{_holder(lock_file)}. Stop it first, or give this one its own --data-dir."
            ) from None
        raise DataDirError(f"cannot lock {lock_file}: {exc.strerror}.") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return DataDirLock(lock_file, fd)


def fsync_path(path: Path) -> None:
    """fsync of a file, or of a directory so that a rename or a new file in it lasts."""
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
