"""Reading an upload as a stream of daily figures: Plausible's CSV export and a daily-figures CSV.

Plausible's export is a zip of CSV files named ``imported_<table>[_YYYYMMDD_YYYYMMDD].csv`` (one
such file alone is read too), columns by their header names (Plausible's CSV import format).
The daily-figures CSV has a header row with ``date`` (or ``time``: the console's time series
export), ``visitors``, ``visits``, ``pageviews`` and optionally ``bounces`` or ``bounce_rate``
(a fraction of visits) and ``visit_duration`` (seconds per visit on average); other columns are
ignored. Nothing is read whole: rows are decoded one at a time from the file (or the zip's
member), and the bytes read are reported for the import's progress. A bad file raises
``ImportFileError`` naming the file, the line and the column; a damaged zip (a bad CRC, a corrupt
deflate stream, a compression method other than stored or deflate) names the member.

Bounds, so an upload can neither amplify nor overflow: a zip unpacks to at most ``UNPACK_RATIO``
times its own size (a small zip to at most ``UNPACK_FLOOR``) and never to more than the caller's
``max_bytes``; every count is at most ``MAX_COUNT`` and every duration ``MAX_DURATION`` seconds,
so the sums the reports take over every row an import can hold stay within a 64-bit integer.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO, Any

from sightline.channels import classify

VALUE_MAX = 500  # as the store cuts paths and values
NONE = "(none)"  # the reports' value for an unknown source, browser, country, ...
MAX_MEMBERS = 100
MAX_COUNT = 10**9  # visitors, visits, pageviews, bounces, events of one row
MAX_DURATION = 10**10  # seconds of one row's visits summed
DURATIONS = frozenset({"visit_duration"})
UNPACK_RATIO = 40  # a zip unpacks to at most this many times its own size
UNPACK_FLOOR = 2**20  # ... or to 1 MiB, whichever is more
READABLE = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
# What reading a damaged member raises: a bad CRC-32, a corrupt deflate stream, a short member.
DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError)
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


# Plausible's tables: the columns each needs (others, such as utm_content, are ignored).
PLAUSIBLE: dict[str, tuple[str, ...]] = {
    "imported_visitors": ("date", "visitors", "pageviews", "bounces", "visits", "visit_duration"),
    "imported_sources": ("date", "source", "visitors", "visits", "visit_duration", "bounces"),
    "imported_pages": ("date", "page", "visitors", "pageviews"),
    "imported_entry_pages": ("date", "entry_page", "visitors", "entrances", "visit_duration", "bounces"),
    "imported_exit_pages": ("date", "exit_page", "visitors", "exits"),
    "imported_locations": ("date", "country", "visitors", "visits", "visit_duration", "bounces"),
    "imported_devices": ("date", "device", "visitors", "visits", "visit_duration", "bounces"),
    "imported_browsers": ("date", "browser", "visitors", "visits", "visit_duration", "bounces"),
    "imported_operating_systems": (
        "date",
        "operating_system",
        "visitors",
        "visits",
        "visit_duration",
        "bounces",
    ),
    "imported_custom_events": ("date", "name", "visitors", "events"),
}
_NAME = re.compile(
    r"^(?:imported_)?("
    + "|".join(t.removeprefix("imported_") for t in PLAUSIBLE)
    + r")(?:_\d{8}_\d{8})?\.csv$"
)
DAILY_COLUMNS = ("date", "visitors", "visits", "pageviews")
DEVICES = {"desktop": "desktop", "mobile": "mobile", "tablet": "tablet"}


def plausible_table(filename: str) -> str | None:
    """The Plausible table a file name holds (``imported_pages_20240101_20241231.csv``), if any."""
    found = _NAME.match(filename.rsplit("/", 1)[-1].lower())
    return f"imported_{found.group(1)}" if found else None


class _Counted(io.RawIOBase):
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


class _Rows:
    """The rows of one CSV stream as dicts, with the file's name and the line for errors."""

    def __init__(self, name: str, stream: IO[bytes], progress: Progress, needed: tuple[str, ...]) -> None:
        self.name = name
        self.text = io.TextIOWrapper(
            io.BufferedReader(_Counted(stream, progress), 1 << 16), encoding="utf-8-sig", newline=""
        )
        self.reader = csv.reader(self.text)
        try:
            header = next(self.reader, None)
        except (csv.Error, UnicodeDecodeError) as error:
            raise self.error(1, None, f"its header line cannot be read ({_reason(error)})") from None
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
                raise self.error(self.reader.line_num + 1, None, _reason(error)) from None
            line = self.reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != width:
                raise self.error(line, None, f"it has {len(cells)} cells where the header has {width}")
            yield line, dict(zip(self.columns, cells, strict=True))

    def number(self, line: int, row: dict[str, str], column: str, optional: bool = False) -> int:
        raw = row.get(column)
        if raw is None or (optional and raw.strip() == ""):
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


def _reason(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "it is not UTF-8 text"
    return f"it is not well-formed CSV ({str(error).splitlines()[0][:120]})"


def _text(value: str, default: str = NONE) -> str:
    cleaned = value.strip()[:VALUE_MAX]
    return cleaned or default


def _plausible_figures(table: str, rows: _Rows) -> Iterator[Figure]:
    """The figures of one of Plausible's tables, row by row."""
    for line, row in rows:
        day = rows.day(line, row, "date")

        def n(column: str, optional: bool = False, line: int = line, row: dict[str, str] = row) -> int:
            return rows.number(line, row, column, optional)

        if table == "imported_visitors":
            yield Figure(
                day,
                "total",
                "",
                n("visitors"),
                n("visits"),
                n("pageviews"),
                n("bounces"),
                n("visit_duration"),
            )
        elif table == "imported_sources":
            sums = (n("visitors"), n("visits"), n("pageviews", True), n("bounces"), n("visit_duration"))
            source = _text(row["source"])
            yield Figure(day, "source", source, *sums)
            tags = {
                column: _text(row.get(column, ""), "")
                for column in ("utm_source", "utm_medium", "utm_campaign")
            }
            for column, value in tags.items():
                if value:
                    yield Figure(day, column, value, *sums)
            channel = classify(source, tags["utm_source"], tags["utm_medium"])  # the row's source and tags
            yield Figure(day, "channel", channel, *sums)
        elif table == "imported_pages":
            yield Figure(
                day, "page", _text(row["page"], "/"), n("visitors"), n("visits", True), n("pageviews")
            )
        elif table == "imported_entry_pages":
            yield Figure(
                day,
                "entry",
                _text(row["entry_page"], "/"),
                n("visitors"),
                n("entrances"),
                n("pageviews", True),
                n("bounces"),
                n("visit_duration"),
            )
        elif table == "imported_exit_pages":
            yield Figure(
                day, "exit", _text(row["exit_page"], "/"), n("visitors"), n("exits"), n("pageviews", True)
            )
        elif table == "imported_custom_events":
            yield Figure(day, "event", _text(row["name"]), n("visitors"), events=n("events"))
        else:
            column, dimension = {
                "imported_locations": ("country", "country"),
                "imported_devices": ("device", "device"),
                "imported_browsers": ("browser", "browser"),
                "imported_operating_systems": ("operating_system", "os"),
            }[table]
            sums = (n("visitors"), n("visits"), n("pageviews", True), n("bounces"), n("visit_duration"))
            value = _text(row[column])
            if dimension == "country":
                value = value.upper() if len(value) == 2 else NONE
            elif dimension == "device":
                value = DEVICES.get(value.lower(), NONE)
            yield Figure(day, dimension, value, *sums)
            region = _text(row.get("region", ""), "") if dimension == "country" else ""
            if region:
                yield Figure(day, "region", region, *sums)


def _daily_figures(rows: _Rows) -> Iterator[Figure]:
    seen: dict[date, int] = {}
    day_column = "date" if "date" in rows.columns else "time"
    if day_column not in rows.columns:
        raise ImportFileError(
            f"{rows.name} lacks the column date (its header line names {', '.join(rows.columns)}).",
            field=f"{rows.name}:1",
        )
    for line, row in rows:
        day = rows.day(line, row, day_column)
        if day in seen:
            raise rows.error(line, day_column, f"{day.isoformat()} is on line {seen[day]} already")
        seen[day] = line
        visitors, visits = rows.number(line, row, "visitors"), rows.number(line, row, "visits")
        pageviews = rows.number(line, row, "pageviews")
        if "bounces" in rows.columns:
            bounces = rows.number(line, row, "bounces")
        elif "bounce_rate" in rows.columns:
            bounces = round(rows.fraction(line, row, "bounce_rate") * visits)
        else:
            bounces = 0
        if bounces > visits:
            raise rows.error(line, "bounces", f"{bounces} bounces are more than the {visits} visits")
        average = rows.seconds(line, row, "visit_duration") if "visit_duration" in rows.columns else 0.0
        duration = round(average * visits)
        if duration > MAX_DURATION:
            raise rows.error(
                line,
                "visit_duration",
                f"{visits} visits of {average:g} seconds are more than {MAX_DURATION:,} seconds",
            )
        yield Figure(day, "total", "", visitors, visits, pageviews, bounces, duration)


@dataclass(frozen=True)
class Upload:
    """An uploaded file, its kind checked: ``figures`` streams what it holds."""

    path: Path
    kind: str  # "plausible" | "daily"
    name: str  # the file's name as uploaded
    tables: tuple[str, ...]  # the CSV files it holds (a zip's members, or the file itself)
    size: int  # bytes to read: a zip's members uncompressed

    def figures(self, progress: Progress) -> Iterator[Figure]:
        if self.kind == "daily":
            with self.path.open("rb") as stream:
                yield from _daily_figures(_Rows(self.name, stream, progress, DAILY_COLUMNS[1:]))
            return
        if not zipfile.is_zipfile(self.path):
            table = plausible_table(self.name)
            assert table is not None
            with self.path.open("rb") as stream:
                yield from _plausible_figures(table, _Rows(self.name, stream, progress, PLAUSIBLE[table]))
            return
        with zipfile.ZipFile(self.path) as archive:
            for member in self.tables:
                table = plausible_table(member)
                assert table is not None
                try:
                    with archive.open(member) as stream:
                        yield from _plausible_figures(
                            table, _Rows(member, stream, progress, PLAUSIBLE[table])
                        )
                except DAMAGED as error:
                    raise ImportFileError(
                        f"{member} in {self.name} is damaged ({_damage(error)}): export the site again, "
                        "or zip the CSV files again.",
                        field=member,
                    ) from None


def _damage(error: BaseException) -> str:
    if isinstance(error, zlib.error):
        return "its compressed data is corrupt"
    if isinstance(error, zipfile.BadZipFile) and "CRC" in str(error):
        return "its CRC-32 checksum does not match"
    return "it cannot be unpacked"


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size < 2**30 else f"{size / 2**30:.1f} GiB"


def open_upload(path: Path, name: str, kind: str | None, max_bytes: int) -> Upload:
    """The upload at ``path`` checked for its kind and tables (not yet row by row: ``figures``).

    ``kind`` None: a zip or a file named like one of Plausible's tables is Plausible's export,
    any other CSV daily figures. ``max_bytes`` bounds a zip's uncompressed size."""
    is_zip = zipfile.is_zipfile(path)
    if name.lower().endswith(".zip") and not is_zip:
        raise ImportFileError(f"{name} is not a readable zip file.", field="file")
    if kind is None:
        kind = "plausible" if is_zip or plausible_table(name) else "daily"
    if kind == "daily":
        if is_zip:
            raise ImportFileError(f"{name} is a zip file; daily figures are one CSV file.", field="file")
        return Upload(path, kind, name, (name,), path.stat().st_size)
    if not is_zip:
        if plausible_table(name) is None:
            raise ImportFileError(
                f"{name} is neither a zip of Plausible's export nor one of its files "
                "(imported_visitors_YYYYMMDD_YYYYMMDD.csv, imported_pages_..., ...).",
                field="file",
            )
        return Upload(path, kind, name, (name,), path.stat().st_size)
    try:
        with zipfile.ZipFile(path) as archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, OSError) as error:
        raise ImportFileError(f"{name} is not a readable zip file ({error}).", field="file") from None
    members: list[str] = []
    for info in infos:
        base = info.filename.rsplit("/", 1)[-1]
        if not base.lower().endswith(".csv") or base.startswith(".") or "__MACOSX" in info.filename:
            continue  # a README or a desktop's metadata
        if plausible_table(base) is None:
            raise ImportFileError(
                f"{name} holds {info.filename}, which is not one of Plausible's export files "
                f"({', '.join(PLAUSIBLE)}).",
                field=info.filename,
            )
        if info.flag_bits & 0x1:
            raise ImportFileError(f"{info.filename} in {name} is encrypted.", field=info.filename)
        if info.compress_type not in READABLE:
            raise ImportFileError(
                f"{info.filename} in {name} is compressed with method {info.compress_type}; Sightline "
                "reads zips whose files are stored or deflated (what Plausible and every common zip "
                "tool make).",
                field=info.filename,
            )
        members.append(info.filename)
    tables = [plausible_table(m) for m in members]
    if len(members) > MAX_MEMBERS or len(set(tables)) != len(tables):
        raise ImportFileError(f"{name} holds a table more than once; export the site again.", field="file")
    if "imported_visitors" not in tables:
        raise ImportFileError(
            f"{name} has no imported_visitors file: the site's daily totals are needed.", field="file"
        )
    size = sum(info.file_size for info in infos if info.filename in members)
    packed = path.stat().st_size
    allowed = min(max_bytes, max(UNPACK_FLOOR, packed * UNPACK_RATIO))
    if size > allowed:
        why = (
            f"the {max_bytes // 2**20} MiB allowed"
            if allowed == max_bytes
            else f"{UNPACK_RATIO} times its own size (a zip of CSV files unpacks to less)"
        )
        raise ImportFileError(
            f"{name} unpacks to {_mib(size)}, more than {why}.", field="file", code="import_too_large"
        )
    return Upload(path, kind, name, tuple(members), size)
