"""Reading CSV files of figures, one row at a time: the rows of a file or a zip's member as dicts,
with the file's name and line in every error, and the numbers, dates and texts checked.

A file is UTF-8 (with or without a byte order mark) or UTF-16 with its byte order mark (what
Matomo's CSV export writes); its cells are separated by commas, or by tabs when the header line
has tabs and no comma (Matomo's TSV export). Every count is at most ``MAX_COUNT`` and every
duration ``MAX_DURATION`` seconds, so the sums the reports take over every row an import can hold
stay within a 64-bit integer.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import IO, Any

VALUE_MAX = 500  # as the store cuts paths and values
NONE = "(none)"  # the reports' value for an unknown source, browser, country, ...
MAX_COUNT = 10**9  # visitors, visits, pageviews, bounces, events of one row
MAX_DURATION = 10**10  # seconds of one row's visits summed
DURATIONS = frozenset({"visit_duration", "sum_visit_length", "entry_sum_visit_length"})
UTF16 = (b"\xff\xfe", b"\xfe\xff")
Progress = Callable[[int], None]


class ImportFileError(Exception):
    """A file that cannot be imported: 422 ``invalid_import`` with the place at fault."""

    def __init__(self, message: str, field: str | None = None, code: str = "invalid_import") -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.code = code

    def as_error(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        return out


@dataclass(frozen=True, slots=True)
class Figure:
    """One day's figures of one value of one dimension (``total``: the whole site)."""

    day: date
    dimension: str
    value: str
    visitors: int = 0
    visits: int = 0
    pageviews: int = 0
    bounces: int = 0
    duration: int = 0  # seconds, summed over the visits
    events: int = 0


class Counted(io.RawIOBase):
    """A binary stream that reports every byte read."""

    def __init__(self, inner: IO[bytes], progress: Progress) -> None:
        self.inner = inner
        self.progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read(len(buffer))
        size = len(data)
        memoryview(buffer)[:size] = data
        if size:
            self.progress(size)
        return size


class Rows:
    """The rows of one CSV stream as dicts, with the file's name and the line for errors."""

    def __init__(self, name: str, stream: IO[bytes], progress: Progress, needed: tuple[str, ...]) -> None:
        self.name = name
        buffered = io.BufferedReader(Counted(stream, progress), 1 << 16)
        encoding = "utf-16" if buffered.peek(2)[:2] in UTF16 else "utf-8-sig"
        self.text = io.TextIOWrapper(buffered, encoding=encoding, newline="")
        try:
            first = self.text.readline()
            delimiter = "\t" if "\t" in first and "," not in first else ","
            self.reader = csv.reader(itertools.chain([first], self.text), delimiter=delimiter)
            header = next(self.reader, None)
        except (csv.Error, UnicodeDecodeError) as error:
            raise self.error(1, None, f"its header line cannot be read ({reason(error)})") from None
        if header is None:
            raise ImportFileError(f"{name} is empty: it needs a header line.", field=name)
        self.columns = [cell.strip().lower() for cell in header]
        missing = [column for column in needed if column not in self.columns]
        if missing:
            raise ImportFileError(
                f"{name} lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                f"(its header line names {', '.join(self.columns) or 'nothing'}).",
                field=f"{name}:1",
            )

    def error(self, line: int, column: str | None, problem: str) -> ImportFileError:
        where = f"{self.name} line {line}" + (f", column {column}" if column else "")
        field = f"{self.name}:{line}" + (f":{column}" if column else "")
        return ImportFileError(f"{where}: {problem}.", field=field)

    def __iter__(self) -> Iterator[tuple[int, dict[str, str]]]:
        width = len(self.columns)
        while True:
            try:
                cells = next(self.reader)
            except StopIteration:
                return
            except (csv.Error, UnicodeDecodeError) as error:
                raise self.error(self.reader.line_num + 1, None, reason(error)) from None
            line = self.reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != width:
                raise self.error(line, None, f"it has {len(cells)} cells where the header has {width}")
            yield line, dict(zip(self.columns, cells, strict=True))

    def number(self, line: int, row: dict[str, str], column: str, optional: bool = False) -> int:
        raw = row.get(column)
        if raw is None or (optional and raw.strip() in ("", "-")):
            return 0
        text = raw.strip()
        if not text.isascii() or not text.isdigit():
            raise self.error(line, column, f"{raw!r} is not a whole number from 0 up")
        bound = MAX_DURATION if column in DURATIONS else MAX_COUNT
        if len(text) > 20 or int(text) > bound:
            raise self.error(line, column, f"{raw[:40]!r} is more than the {bound:,} a row may hold")
        return int(text)

    def fraction(self, line: int, row: dict[str, str], column: str) -> float:
        raw = row[column].strip()
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            raise self.error(line, column, f"{raw!r} is not a fraction from 0 to 1")
        return value

    def seconds(self, line: int, row: dict[str, str], column: str) -> float:
        raw = row[column].strip()
        try:
            value = float(raw) if raw else 0.0
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= MAX_DURATION:
            raise self.error(line, column, f"{raw[:40]!r} is not a number of seconds up to {MAX_DURATION:,}")
        return value

    def day(self, line: int, row: dict[str, str], column: str) -> date:
        raw = row[column].strip()
        try:
            if len(raw) != 10:
                raise ValueError(raw)
            return date.fromisoformat(raw)
        except ValueError:
            raise self.error(line, column, f"{raw!r} is not a date like 2024-01-31") from None


def reason(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "it is not UTF-8 text"
    return f"it is not well-formed CSV ({str(error).splitlines()[0][:120]})"


def text(value: str, default: str = NONE) -> str:
    cleaned = value.strip()[:VALUE_MAX]
    return cleaned or default
