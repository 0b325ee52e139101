"""Report answers (``Report.summary()``, ``.timeseries()``, ``.breakdown()``) as CSV text."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from sightline.spreadsheet import safe_cell

FIGURES = ("visitors", "visits", "pageviews", "views_per_visit", "bounce_rate", "visit_duration")


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([safe_cell(str(cell)) for cell in header])
    for row in rows:
        writer.writerow([safe_cell("" if cell is None else str(cell)) for cell in row])
    return buffer.getvalue()


def summary_csv(answer: dict[str, Any]) -> str:
    current, previous = answer["current"], answer.get("previous")
    header = ["metric", "current", *(["previous"] if previous else [])]
    rows = [[name, current.get(name), *([previous.get(name)] if previous else [])] for name in current]
    return _csv(header, rows)


def timeseries_csv(answer: dict[str, Any]) -> str:
    points: list[dict[str, Any]] = answer["points"]
    previous: list[dict[str, Any]] | None = answer.get("previous")
    names = [k for k in (points[0] if points else dict.fromkeys(("time", *FIGURES))) if k != "time"]
    header = ["time", *names, *(["previous_time", *(f"previous_{n}" for n in names)] if previous else [])]
    rows = []
    for index, point in enumerate(points):
        row = [point["time"], *(point.get(n) for n in names)]
        if previous:
            before = previous[index] if index < len(previous) else {}
            row += [before.get("time"), *(before.get(n) for n in names)]
        rows.append(row)
    return _csv(header, rows)


def breakdown_csv(answer: dict[str, Any]) -> str:
    rows: list[dict[str, Any]] = answer["rows"]
    header: list[str] = []
    for row in rows:
        header += [key for key in row if key not in header and not isinstance(row[key], dict)]
    if not header:
        header = ["value"]
    return _csv(header, ([row.get(key) for key in header] for row in rows))


def filename(site_id: int, kind: str, answer: dict[str, Any]) -> str:
    span = answer.get("range", {})
    extra = f"-{answer['dimension']}" if kind == "breakdown" else ""
    return f"site-{site_id}-{kind}{extra}-{span.get('from', '')}-{span.get('to', '')}.csv"
