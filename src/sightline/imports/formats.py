"""Reading an upload as a stream of daily figures: Plausible's CSV export, Umami's events, Matomo's
reports, and a daily-figures CSV.

Plausible's export is a zip of CSV files named ``imported_<table>[_YYYYMMDD_YYYYMMDD].csv`` (one
such file alone is read too), columns by their header names (Plausible's CSV import format).
Umami's is one CSV of its events joined with their sessions (``umami``); Matomo's a zip of its
Reporting API's CSV or TSV exports, one per report, named after the report (``matomo``).
The daily-figures CSV has a header row with ``date`` (or ``time``: the console's time series
export), ``visitors``, ``visits``, ``pageviews`` and optionally ``bounces`` or ``bounce_rate``
(a fraction of visits) and ``visit_duration`` (seconds per visit on average); other columns are
ignored. Nothing is read whole: rows are decoded one at a time from the file (or the zip's
member), and the bytes read are reported for the import's progress. A bad file raises
``ImportFileError`` naming the file, the line and the column; a damaged zip (a bad CRC, a corrupt
deflate stream, a compression method other than stored or deflate) names the member.

Bounds, so an upload can neither amplify nor overflow: a zip unpacks to at most ``UNPACK_RATIO``
times its own size (a small zip to at most ``UNPACK_FLOOR``) and never to more than the caller's
``max_bytes``; every number is bounded as ``rows`` says.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO

from sightline.channels import classify
from sightline.imports import matomo, umami
from sightline.imports.rows import (
    MAX_DURATION,
    NONE,
    UTF16,
    Figure,
    ImportFileError,
    Progress,
    Rows,
    text,
)

__all__ = ["KINDS", "Figure", "ImportFileError", "Upload", "open_upload"]
KINDS = ("plausible", "umami", "matomo", "daily")
MAX_MEMBERS = 100
UNPACK_RATIO = 40  # a zip unpacks to at most this many times its own size
UNPACK_FLOOR = 2**20  # ... or to 1 MiB, whichever is more
READABLE = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
# What reading a damaged member raises: a bad CRC-32, a corrupt deflate stream, a short member.
DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError)


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


def _plausible_figures(table: str, rows: Rows) -> Iterator[Figure]:
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
            source = text(row["source"])
            yield Figure(day, "source", source, *sums)
            tags = {
                column: text(row.get(column, ""), "")
                for column in ("utm_source", "utm_medium", "utm_campaign")
            }
            for column, value in tags.items():
                if value:
                    yield Figure(day, column, value, *sums)
            channel = classify(source, tags["utm_source"], tags["utm_medium"])  # the row's source and tags
            yield Figure(day, "channel", channel, *sums)
        elif table == "imported_pages":
            yield Figure(
                day, "page", text(row["page"], "/"), n("visitors"), n("visits", True), n("pageviews")
            )
        elif table == "imported_entry_pages":
            yield Figure(
                day,
                "entry",
                text(row["entry_page"], "/"),
                n("visitors"),
                n("entrances"),
                n("pageviews", True),
                n("bounces"),
                n("visit_duration"),
            )
        elif table == "imported_exit_pages":
            yield Figure(
                day, "exit", text(row["exit_page"], "/"), n("visitors"), n("exits"), n("pageviews", True)
            )
        elif table == "imported_custom_events":
            yield Figure(day, "event", text(row["name"]), n("visitors"), events=n("events"))
        else:
            column, dimension = {
                "imported_locations": ("country", "country"),
                "imported_devices": ("device", "device"),
                "imported_browsers": ("browser", "browser"),
                "imported_operating_systems": ("operating_system", "os"),
            }[table]
            sums = (n("visitors"), n("visits"), n("pageviews", True), n("bounces"), n("visit_duration"))
            value = text(row[column])
            if dimension == "country":
                value = value.upper() if len(value) == 2 else NONE
            elif dimension == "device":
                value = DEVICES.get(value.lower(), NONE)
            yield Figure(day, dimension, value, *sums)
            region = text(row.get("region", ""), "") if dimension == "country" else ""
            if region:
                yield Figure(day, "region", region, *sums)


def _daily_figures(rows: Rows) -> Iterator[Figure]:
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
    kind: str  # one of KINDS
    name: str  # the file's name as uploaded
    tables: tuple[str, ...]  # the CSV files it holds (a zip's members, or the file itself)
    size: int  # bytes to read: a zip's members uncompressed
    zone: str = "UTC"  # the site's time zone: the days of Umami's events

    def _figures(
        self, member: str, stream: IO[bytes], progress: Progress, carry: dict[date, int]
    ) -> Iterator[Figure]:
        if self.kind == "daily":
            return _daily_figures(Rows(member, stream, progress, DAILY_COLUMNS[1:]))
        if self.kind == "umami":
            return umami.figures(Rows(member, stream, progress, umami.NEEDED), self.zone)
        if self.kind == "matomo":
            report = matomo.report_of(member)
            assert report is not None
            return matomo.figures(report, Rows(member, stream, progress, matomo.REPORTS[report]), carry)
        table = plausible_table(member)
        assert table is not None
        return _plausible_figures(table, Rows(member, stream, progress, PLAUSIBLE[table]))

    def figures(self, progress: Progress) -> Iterator[Figure]:
        carry: dict[date, int] = {}  # what one file of an export tells the next (Matomo's pageviews)
        if not zipfile.is_zipfile(self.path):
            with self.path.open("rb") as stream:
                yield from self._figures(self.name, stream, progress, carry)
            return
        with zipfile.ZipFile(self.path) as archive:
            for member in self.tables:
                try:
                    with archive.open(member) as stream:
                        yield from self._figures(member, stream, progress, carry)
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


def _header(stream: IO[bytes]) -> list[str]:
    """The column names of a CSV stream's first line, lower case ([] when unreadable)."""
    head = stream.read(1 << 16)
    encoding = "utf-16" if head[:2] in UTF16 else "utf-8-sig"
    first = head.decode(encoding, errors="replace").splitlines()[:1]
    cells = first[0].split("\t" if "\t" in first[0] and "," not in first[0] else ",") if first else []
    return [cell.strip().strip('"').lower() for cell in cells]


def _kind_of_file(path: Path, name: str) -> str:
    if plausible_table(name):
        return "plausible"
    if matomo.report_of(name):
        return "matomo"
    with path.open("rb") as stream:
        return "umami" if umami.looks_like(_header(stream)) else "daily"


def _kind_of_zip(archive: zipfile.ZipFile, members: list[str]) -> str:
    if any(plausible_table(m) for m in members) or not members:
        return "plausible"
    if any(matomo.report_of(m) for m in members):
        return "matomo"
    try:
        with archive.open(members[0]) as stream:
            return "umami" if umami.looks_like(_header(stream)) else "plausible"
    except DAMAGED:
        return "plausible"


def _table_of(kind: str, member: str) -> str | None:
    if kind == "matomo":
        return matomo.report_of(member)
    if kind == "umami":
        return "events"
    return plausible_table(member)


def _needed(kind: str, name: str, tables: list[str | None]) -> None:
    """Raises when an export lacks a file it needs."""
    if kind == "plausible" and "imported_visitors" not in tables:
        raise ImportFileError(
            f"{name} has no imported_visitors file: the site's daily totals are needed.", field="file"
        )
    if kind == "matomo":
        missing = [report for report in matomo.REQUIRED if report not in tables]
        if missing:
            raise ImportFileError(
                f"{name} has no {' or '.join(missing)} report: Matomo's daily totals need "
                f"{' and '.join(matomo.REQUIRED)} (zip them with the other reports).",
                field="file",
            )
    if kind == "umami" and len(tables) != 1:
        raise ImportFileError(
            f"{name} holds {len(tables)} CSV files; Umami's events are one CSV file.", field="file"
        )


def _one_file(path: Path, name: str, kind: str, zone: str) -> Upload:
    if kind == "plausible" and plausible_table(name) is None:
        raise ImportFileError(
            f"{name} is neither a zip of Plausible's export nor one of its files "
            "(imported_visitors_YYYYMMDD_YYYYMMDD.csv, imported_pages_..., ...).",
            field="file",
        )
    if kind == "matomo":
        _needed(kind, name, [matomo.report_of(name)])
    return Upload(path, kind, name, (name,), path.stat().st_size, zone)


def open_upload(path: Path, name: str, kind: str | None, max_bytes: int, zone: str = "UTC") -> Upload:
    """The upload at ``path`` checked for its kind and tables (not yet row by row: ``figures``).

    ``kind`` None: by the file. A zip holding Plausible's file names, or a file named like one of
    them, is Plausible's export; one named after Matomo's reports is Matomo's; a CSV whose header
    names Umami's event columns is Umami's; any other CSV daily figures. ``max_bytes`` bounds a
    zip's uncompressed size; ``zone`` is the site's time zone."""
    is_zip = zipfile.is_zipfile(path)
    if name.lower().endswith(".zip") and not is_zip:
        raise ImportFileError(f"{name} is not a readable zip file.", field="file")
    if not is_zip:
        return _one_file(path, name, kind or _kind_of_file(path, name), zone)
    if kind == "daily":
        raise ImportFileError(f"{name} is a zip file; daily figures are one CSV file.", field="file")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
            csvs = [
                info.filename
                for info in infos
                if info.filename.rsplit("/", 1)[-1].lower().endswith(".csv")
                or info.filename.lower().endswith(".tsv")
            ]
            kind = kind or _kind_of_zip(archive, csvs)
    except (zipfile.BadZipFile, OSError) as error:
        raise ImportFileError(f"{name} is not a readable zip file ({error}).", field="file") from None
    members: list[str] = []
    for info in infos:
        base = info.filename.rsplit("/", 1)[-1]
        if not base.lower().endswith((".csv", ".tsv")) or base.startswith(".") or "__MACOSX" in info.filename:
            continue  # a README or a desktop's metadata
        if _table_of(kind, base) is None:
            raise ImportFileError(_stranger(kind, name, info.filename), field=info.filename)
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
    if kind == "matomo":
        members.sort(key=lambda member: matomo.order(matomo.report_of(member) or ""))
    tables = [_table_of(kind, m) for m in members]
    if len(members) > MAX_MEMBERS or (kind != "umami" and len(set(tables)) != len(tables)):
        raise ImportFileError(f"{name} holds a table more than once; export the site again.", field="file")
    _needed(kind, name, tables)
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
    return Upload(path, kind, name, tuple(members), size, zone)


def _stranger(kind: str, name: str, member: str) -> str:
    if kind == "matomo":
        return (
            f"{name} holds {member}, whose name names none of the Matomo reports read "
            f"({', '.join(matomo.REPORTS)}): name each file after its report."
        )
    return f"{name} holds {member}, which is not one of Plausible's export files ({', '.join(PLAUSIBLE)})."
