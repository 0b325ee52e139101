"""Matomo's reports as daily figures: its Reporting API's CSV (or TSV) exports, one per report.

Each file is one report (``VisitsSummary.get``, ``Actions.getPageUrls``, ...) asked for with
``period=day&date=FROM,TO`` (``format=csv`` or ``tsv``, ``flat=1``, ``filter_limit=-1``): Matomo
writes such a range with a first column ``date`` and the report's columns by their API names
(``nb_uniq_visitors``, ``nb_visits``, ``bounce_count``, ``sum_visit_length``, ``nb_hits``, ...),
in UTF-16 by default. A file's name says which report it holds (``VisitsSummary.get.csv``); a
zip holds several. ``VisitsSummary.get`` (the daily totals) and ``Actions.get`` (its pageviews,
which the summary does not count apart from downloads and outlinks) are needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from sightline.imports.rows import NONE, Figure, Rows, text

SUMMARY, ACTIONS = "VisitsSummary.get", "Actions.get"
# The reports read, in the order they are read (the pageviews before the totals), and the
# columns each needs; other columns are ignored.
REPORTS: dict[str, tuple[str, ...]] = {
    ACTIONS: ("date", "nb_pageviews"),
    SUMMARY: ("date", "nb_visits"),
    "Actions.getPageUrls": ("date", "label", "nb_hits"),
    "Referrers.getWebsites": ("date", "label", "nb_visits"),
    "Referrers.getSearchEngines": ("date", "label", "nb_visits"),
    "Referrers.getSocials": ("date", "label", "nb_visits"),
    "UserCountry.getCountry": ("date", "nb_visits"),
    "DevicesDetection.getType": ("date", "label", "nb_visits"),
    "DevicesDetection.getBrowsers": ("date", "label", "nb_visits"),
    "DevicesDetection.getOsFamilies": ("date", "label", "nb_visits"),
    "Events.getName": ("date", "label", "nb_events"),
}
REQUIRED = (SUMMARY, ACTIONS)
DIMENSIONS = {
    "Referrers.getWebsites": "source",
    "Referrers.getSearchEngines": "source",
    "Referrers.getSocials": "source",
    "UserCountry.getCountry": "country",
    "DevicesDetection.getType": "device",
    "DevicesDetection.getBrowsers": "browser",
    "DevicesDetection.getOsFamilies": "os",
}
DEVICES = {
    "desktop": "desktop",
    "smartphone": "mobile",
    "phablet": "mobile",
    "feature phone": "mobile",
    "tablet": "tablet",
}
BROWSERS = {"microsoft edge": "Edge", "internet explorer": "IE", "samsung browser": "Samsung Internet"}
SYSTEMS = {"mac": "Mac OS X", "gnu/linux": "Linux", "chrome os": "Chrome OS"}


def report_of(filename: str) -> str | None:
    """The report a file's name names (``Actions.getPageUrls.csv``), if any: the longest match."""
    base = filename.rsplit("/", 1)[-1].lower()
    found = [name for name in REPORTS if name.lower() in base]
    return max(found, key=len) if found else None


def order(report: str) -> int:
    return list(REPORTS).index(report)


def _value(report: str, row: dict[str, str]) -> str:
    if report == "UserCountry.getCountry":
        code = text(row.get("metadata_code") or row.get("code") or "", "").upper()
        return code if len(code) == 2 and code.isalpha() and code != "XX" else NONE
    label = text(row["label"])
    if report == "DevicesDetection.getType":
        return DEVICES.get(label.lower(), NONE)
    if report == "DevicesDetection.getBrowsers":
        return BROWSERS.get(label.lower(), label)
    if report == "DevicesDetection.getOsFamilies":
        return SYSTEMS.get(label.lower(), label)
    if report == "Referrers.getWebsites":
        return label.lower().removeprefix("www.")
    return label


def _path(label: str) -> str:
    path = text(label, "/")
    return path if path.startswith("/") else f"/{path}"


def figures(report: str, rows: Rows, pageviews: dict[date, int]) -> Iterator[Figure]:
    """The figures of one report's file; ``pageviews`` carries ``Actions.get``'s days to the
    summary read after it."""
    seen: dict[date, int] = {}
    for line, row in rows:
        day = rows.day(line, row, "date")

        def n(column: str, line: int = line, row: dict[str, str] = row) -> int:
            return rows.number(line, row, column, optional=True)

        if report in (ACTIONS, SUMMARY):
            if day in seen:
                raise rows.error(line, "date", f"{day.isoformat()} is on line {seen[day]} already")
            seen[day] = line
        if report == ACTIONS:
            pageviews[day] = n("nb_pageviews")
        elif report == SUMMARY:
            visits, bounces = n("nb_visits"), n("bounce_count")
            if bounces > visits:
                raise rows.error(line, "bounce_count", f"{bounces} bounces are more than the {visits} visits")
            views = pageviews.get(day, 0)
            yield Figure(
                day, "total", "", n("nb_uniq_visitors"), visits, views, bounces, n("sum_visit_length")
            )
        elif report == "Actions.getPageUrls":
            path = _path(row["label"])
            yield Figure(day, "page", path, n("nb_uniq_visitors"), n("nb_visits"), n("nb_hits"))
            if n("entry_nb_visits"):
                yield Figure(
                    day,
                    "entry",
                    path,
                    n("entry_nb_uniq_visitors"),
                    n("entry_nb_visits"),
                    n("entry_nb_actions"),
                    n("entry_bounce_count"),
                    n("entry_sum_visit_length"),
                )
            if n("exit_nb_visits"):
                yield Figure(day, "exit", path, n("exit_nb_uniq_visitors"), n("exit_nb_visits"))
        elif report == "Events.getName":
            yield Figure(day, "event", text(row["label"]), n("nb_visits"), events=n("nb_events"))
        else:
            yield Figure(
                day,
                DIMENSIONS[report],
                _value(report, row),
                n("nb_uniq_visitors"),
                n("nb_visits"),
                0,
                n("bounce_count"),
                n("sum_visit_length"),
            )
