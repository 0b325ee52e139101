"""The weekly and monthly digest of one site: its figures against the period before, top pages,
sources and goals (custom events where goals are not available), as plain text and HTML.

Figures come from ``reports.service.Report``, the same code as the dashboard.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Engine

from sightline.imports.figures import ImportedFigures
from sightline.reports.params import DIMENSIONS, Query
from sightline.reports.service import Report, StoreReader

FIGURES = (
    ("visitors", "Visitors"),
    ("visits", "Visits"),
    ("pageviews", "Pageviews"),
    ("bounce_rate", "Bounce rate"),
    ("visit_duration", "Visit duration"),
)


@dataclass(frozen=True)
class Span:
    kind: str  # "weekly" | "monthly"
    first: date
    last: date

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.first.isoformat()}"

    @property
    def title(self) -> str:
        if self.kind == "monthly":
            return self.first.strftime("%B %Y")
        return f"{self.first.isoformat()} to {self.last.isoformat()}"


def last_full(kind: str, today: date) -> Span:
    """The last complete week (Monday to Sunday) or month before ``today``."""
    if kind == "weekly":
        monday = today - timedelta(days=today.weekday())
        return Span(kind, monday - timedelta(days=7), monday - timedelta(days=1))
    first_of_this = today.replace(day=1)
    last = first_of_this - timedelta(days=1)
    return Span(kind, last.replace(day=1), last)


def _value(name: str, value: float) -> str:
    if name == "bounce_rate":
        return f"{value * 100:.0f} %"
    if name == "visit_duration":
        minutes, seconds = divmod(int(value), 60)
        return f"{minutes} min {seconds:02d} s"
    return f"{int(value):,}"


def _change(current: float, previous: float | None) -> str:
    if previous is None:
        return ""
    if previous == 0:
        return "new" if current else "no change"
    delta = (current - previous) / previous * 100
    return "no change" if abs(delta) < 0.5 else f"{delta:+.0f} %"


def gather(
    store: StoreReader, site: Any, span: Span, now: datetime, engine: Engine | None = None
) -> dict[str, Any]:
    """The digest's figures and tables for ``site`` over ``span`` (with imported history when
    ``engine``, the SQL database's, is given: as the dashboard shows them)."""
    first, last = span.first.isoformat(), span.last.isoformat()
    imported = ImportedFigures(engine) if engine is not None else None
    query = Query("custom", first, last, compare=True)
    summary = Report(store, site, query, now, imported=imported).summary()
    goals = "goals" if "goals" in DIMENSIONS else "events"
    tables = {}
    for dimension in ("pages", "sources", goals):
        query = Query("custom", first, last, dimension=dimension, limit=5)
        rows = Report(store, site, query, now, imported=imported).breakdown()["rows"]
        tables[dimension] = rows
    return {"summary": summary, "tables": tables, "goals": goals}


TABLE_TITLES = {"pages": "Top pages", "sources": "Top sources", "goals": "Goals", "events": "Custom events"}


def _first_number(row: dict[str, Any]) -> tuple[str, Any]:
    for key in ("visitors", "conversions", "events", "pageviews", "visits"):
        if key in row:
            return key, row[key]
    return "", ""


def render(site: Any, span: Span, figures: dict[str, Any], console_url: str) -> tuple[str, str, str]:
    """(subject, text, html) of the digest."""
    name = str(site["name"])
    word = "Weekly" if span.kind == "weekly" else "Monthly"
    subject = f"{word} report for {name}: {span.title}"
    current = figures["summary"]["current"]
    previous = figures["summary"]["previous"] or {}
    link = f"{console_url}/sites/{site['id']}/reports?range=custom&from={span.first}&to={span.last}"
    text = [f"{word} report for {name} ({site['domain']}), {span.title}", ""]
    html = [
        f'<h1 style="font-size:20px">{escape(word)} report for {escape(name)}</h1>',
        f"<p>{escape(str(site['domain']))}, {escape(span.title)}</p>",
        '<table cellpadding="6" style="border-collapse:collapse"><tr><th align="left">Figure</th>'
        '<th align="right">This period</th><th align="right">Change</th></tr>',
    ]
    for key, label in FIGURES:
        value, change = _value(key, current[key]), _change(current[key], previous.get(key))
        text.append(f"{label}: {value} ({change} against the period before)")
        html.append(
            f'<tr><td>{escape(label)}</td><td align="right">{escape(value)}</td>'
            f'<td align="right">{escape(change)}</td></tr>'
        )
    html.append("</table>")
    for dimension, rows in figures["tables"].items():
        title = TABLE_TITLES.get(dimension, dimension)
        text += ["", f"{title}:"]
        html.append(f'<h2 style="font-size:16px">{escape(title)}</h2>')
        if not rows:
            text.append("  (none in this period)")
            html.append("<p>None in this period.</p>")
            continue
        html.append("<ol>")
        for row in rows:
            key, number = _first_number(row)
            shown = "Direct / none" if row["value"] == "(none)" else str(row["value"])
            text.append(f"  {shown}: {number} {key}")
            html.append(f"<li>{escape(shown)}: {escape(str(number))} {escape(key)}</li>")
        html.append("</ol>")
    text += ["", f"The full dashboard: {link}"]
    html.append(f'<p><a href="{escape(link)}">Open the full dashboard</a></p>')
    return subject, "\n".join(text) + "\n", "\n".join(html)


def local_today(site: Any, now: datetime) -> date:
    return now.astimezone(ZoneInfo(str(site["timezone"]))).date()
