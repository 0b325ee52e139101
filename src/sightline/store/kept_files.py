"""The keys' files of the overview's kept spans (``kept_days``), as the server writes and reads
them: a span's visitors' sorted, unique keys, 8 bytes each, little-endian, then a check word
(their XOR with ``CHECK``). Only NumPy: the server reads and writes the files without loading the
store's engine, whose table of rows (``kept_days``) lives in the store process.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

DIRECTORY = "store-kept-days"  # beside the store's file: the rows' keys
CHECK = 0x5EED_0DA7_5EED_0DA7  # the check word is the keys' XOR with this (no keys: this)
Keys = npt.NDArray[np.uint64]
Row = tuple[
    int, int, int, int, int, int, str
]  # site, change number read at, low, high, pageviews, visitors, file
Found = tuple[int, int, int, int, int, str]  # site, low, high, pageviews, visitors, keys' file (a path)


class Files:
    """The keys' files of one store's rows, as the server writes and reads them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def save(self, keys: Keys) -> str:
        """Writes ``keys`` (sorted, unique) to a new file; its name."""
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{uuid.uuid4().hex}.keys"
        check = np.array([_check(keys)], dtype="<u8")
        with open(self.directory / name, "wb") as out:
            out.write(keys.astype("<u8", copy=False).tobytes())
            out.write(check.tobytes())
        return name

    def named(self, rows: Iterable[tuple[int, int, int, int, int, Keys]]) -> list[Row]:
        """Rows of keys (site, change number, low, high, pageviews, keys) as the store keeps them:
        how many the keys are, and the name of the file of its own each one's are written to."""
        return [(*row[:5], len(row[5]), self.save(row[5])) for row in rows]

    @staticmethod
    def opened(found: Iterable[Found]) -> list[tuple[int, int, int, int, KeysFile]]:
        """Each row ``found`` with its keys' file, not read yet."""
        return [
            (s, low, high, pageviews, KeysFile(path, count)) for s, low, high, pageviews, count, path in found
        ]


class KeysFile:
    """One row's keys' file: how many keys it holds, and the keys when read."""

    __slots__ = ("count", "path")

    def __init__(self, path: str, count: int) -> None:
        self.path = path
        self.count = count

    def read(self) -> Keys | None:
        """The keys; None when the file went, or holds other than ``count`` keys and their check word."""
        try:
            words = np.fromfile(self.path, dtype="<u8")
        except OSError:
            return None
        if len(words) != self.count + 1 or int(words[-1]) != _check(words[:-1]):
            return None
        return words[:-1].astype(np.uint64, copy=False)


def _check(keys: Keys) -> int:
    return (int(np.bitwise_xor.reduce(keys)) if len(keys) else 0) ^ CHECK
