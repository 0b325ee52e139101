"""Proof by property that figures kept between requests are the figures of what was stored.

A seeded random driver interleaves ingest (late events up to the oldest age ingest accepts,
visits across the site's midnight and across an hour, late events of stored visits), erasure of
the newest and of the oldest visitor, a retention cut, the log's trim, a time-zone change, goal
edits, a site's deletion and ``rebuild-store``. After every step the store process's loop runs
until the store holds the log, and every report of every site (summary, time series, the
breakdowns, goals, funnel, retention, journeys, realtime; and every site at a glance, served
against cold) is computed three ways: as served (one report service for the whole run, its
figures kept between requests, the store's selections kept and brought up to date by the keys of
the visits each fed batch touched, and ``Dialect.exact_below`` set so low that every kept path is
taken, or on PostgreSQL's DuckDB so high that every count is exact: the kept keys), cold (a
report service that kept nothing, without kept selections), and by the independent oracle over
the events the log acknowledged (``oracle``). All three must agree exactly: each site's visitor
codes differ in the low bits every bitmap uses, so the bitmaps' estimates are exact counts. On
both engines (DuckDB; ClickHouse's SQL through chDB), on SQLite and PostgreSQL logs.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sightline.database import open_database
from sightline.reports import goal_days, overview_days, params, realtime, service
from sightline.reports.conversions import funnel_report, journeys_report, retention_report
from sightline.reports.filters import NAMES
from sightline.reports.kept_figures import kept_of
from sightline.reports.overview import overview
from sightline.reports.steps import parse_step
from sightline.sites.service import get_site, list_sites
from tests.conftest import database_url_for
from tests.reports import helpers, oracle
from tests.reports.helpers import Event, Visit
from tests.reports.kept_world import InProcessStore, SiteModel, World, open_engine

EXACT_BELOW = 1  # every span holding an event takes the big-store paths, kept figures included
EXACT = 10**12  # every count exact: the tables' visitors kept as keys per span (``day_visitors``)
COMBINATIONS = [
    ("sqlite", "duckdb", EXACT_BELOW),
    ("postgresql", "duckdb", EXACT),
    ("sqlite", "clickhouse", EXACT_BELOW),
    ("postgresql", "clickhouse", EXACT_BELOW),
]
# Every write once, in an order the seed draws (drawn by weight alone, 10 steps of seed 26 held no
# trim, time-zone change, deletion, rebuild or erasure of the oldest visitor), and ingest once
# more: late events after a write that dropped kept figures.
WRITES = ("ingest", "erase_newest", "erase_oldest", "retention", "trim", "zone", "goals", "delete", "rebuild")
MORE = ("ingest",)
STEPS = int(os.environ.get("SIGHTLINE_PROPERTY_STEPS", str(len(WRITES) + len(MORE))))  # more: set it
WEIGHTS = (5, 1.5, 1, 1, 1, 1, 1, 0.6, 0.6)  # of the steps after the first ones, drawn one by one
SEED = int(os.environ.get("SIGHTLINE_PROPERTY_SEED", "26"))  # another sequence: set it
LOG_DAYS = 10  # the log's trim (--event-log-retention-days)
BREAKDOWN = (*params.COMMON, "dimension", "limit", "offset", "search", "name", "viewport")
DIMENSIONS = ["pages", "entry_pages", "exit_pages", "sources", "utm_campaigns", "devices", "events"]
# The reports no kept figure or selection can reach: computed once (served), checked by the oracle.
UNKEPT = ("funnel", "journeys", "retention")
FUNNEL = ["page:/", "page:/pricing", "event:signup"]
PERIODS = [{"range": "today"}, {"range": "7d", "compare": "true"}, {"range": "30d"}]


@pytest.fixture(
    params=COMBINATIONS, ids=[f"{c[0]}-{c[1]}{'-exact' if c[2] == EXACT else ''}" for c in COMBINATIONS]
)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    backend, engine, exact_below = request.param
    db = open_database(database_url_for(request, backend, tmp_path), migrate=False)
    url = (
        request.getfixturevalue("clickhouse").url(f"t_{uuid.uuid4().hex[:12]}")
        if engine == "clickhouse"
        else None
    )
    made = World(db, open_engine(engine, tmp_path, url), backend, SEED, exact_below, LOG_DAYS)
    yield made
    made.close()
    db.dispose()


def test_kept_figures_equal_cold_figures_and_the_raw_events_after_any_sequence_of_writes(
    world: World,
) -> None:
    for _ in range(2):
        site = world.add_site()
        world.ingest(site, world.history_of(site, 70, 30))
    world.settle()
    check(world)
    for op in schedule(world, STEPS):
        step(world, op)
        world.settle()
        check(world)
    if world.keeps:  # the kept paths were taken (ClickHouse keeps nothing: every query selects)
        kept = [kept_of(world.served), realtime.ledger_of(world.served), world.engine.kept]  # type: ignore[attr-defined]
        assert all(k is not None and len(k) for k in kept)
        assert world.engine.kept.by_keys  # type: ignore[attr-defined]  # selections brought up to date by a feed's keys
        if world.dialect.exact_below == EXACT:  # the tables' exact visitors were kept as keys
            layer = kept_of(world.served)
            assert layer is not None
            assert any(str(key[3][-1]).startswith("keys") for key in layer._kept if isinstance(key[3], tuple))


def test_a_visit_attribute_filter_leaves_out_a_visit_a_late_event_moved_before_the_span(world: World) -> None:
    """Its events in the span were fed first (their rows say it began there), then an earlier
    event moved its start before the span: the pages table under a browser filter counts it by its
    visit row, on both engines (ClickHouse refused the query that lists such visits)."""
    site = world.add_site()
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    first, *later = world.visit(site, midnight - timedelta(minutes=10), midnight + timedelta(hours=1))
    later = [replace(e, time=midnight + timedelta(minutes=5 + n)) for n, e in enumerate(later or [first])]
    for rows in (later, [first]):
        world.ingest(site, rows)
        world.settle()
    query = {"dimension": "pages", "limit": "100", "range": "today", "browser": "!Opera"}
    served = _answer(world, world.served, site, "breakdown", query)
    assert _shown("breakdown", served) == _expected(site, "breakdown", query, served) == {}


def schedule(w: World, steps: int) -> list[str]:
    """The writes of a run: each of ``WRITES`` and ``MORE`` once, shuffled, the rebuild after the
    trim (what the trim took leaves the reports only then), then (for a longer run) writes drawn
    by ``WEIGHTS``."""
    ops = [*WRITES, *MORE]
    w.rng.shuffle(ops)
    first, then = sorted((ops.index("trim"), ops.index("rebuild")))
    ops[first], ops[then] = "trim", "rebuild"  # a rebuild before any trim reads the same log again
    ops += w.rng.choices(WRITES, WEIGHTS, k=max(0, steps - len(ops)))
    return ops[:steps]


def step(w: World, op: str) -> None:
    """One write, on a site chosen at random."""
    site = w.rng.choice(w.sites)
    if op == "ingest":
        rows = w.fresh(site)
        w.ingest(site, rows)
        w.said(f"site {site.id}: ingest {len(rows)} events, {_times(site, rows)}")
    elif op in ("erase_newest", "erase_oldest") and site.rows:
        if op == "erase_newest":  # the visitor of the log's newest event
            site = max((s for s in w.sites if s.rows), key=lambda s: max(r.id for r in s.rows))
            row = max(site.rows, key=lambda r: r.id)
        else:
            row = min(site.rows, key=lambda r: r.id)
        code = row.event.visitor_id
        w.erase(site, code)
        w.said(f"site {site.id}: {op.replace('_', ' ')} visitor {code}")
    elif op == "retention":
        days = w.rng.randrange(3, 25)
        w.retention_cut(site, days)
        w.said(f"site {site.id}: retention cut at {days} days")
    elif op == "trim":
        w.said(f"log trimmed: {w.trim()} events older than {LOG_DAYS} days")
    elif op == "zone":
        w.change_zone(site)
    elif op == "goals":
        w.edit_goals(site)
    elif op == "delete":
        w.delete_site(site)
        added = w.add_site()
        w.ingest(added, w.history_of(added, 40, 20))
    elif op == "rebuild":
        w.rebuild()
        w.said("store rebuilt from the log")


def _times(site: SiteModel, rows: list[Event]) -> str:
    zone = ZoneInfo(site.zone)
    return ", ".join(e.time.astimezone(zone).strftime("%d %H:%M:%S") for e in rows)


# -- the reports, three ways --------------------------------------------------------------------


def check(w: World) -> None:
    for site in w.sites:
        turn = len(w.history) + site.id
        choices = _filters(site)  # in turn, so every filter is checked after writes of every kind
        filters = choices[turn % len(choices)]
        for kind, query in _requests(site, filters, on_visits=turn % 2 == 1):
            served = _answer(w, w.served, site, kind, query)
            where = f"{kind} {query} of site {site.id} ({site.zone}) after:\n  " + "\n  ".join(w.history)
            if w.keeps and _kept_may_touch(kind, query):  # ClickHouse: served and cold are one path
                cold = _answer(w, w.cold(), site, kind, query)
                if _range(cold) != _range(served):  # the hour turned between the two: ask both again
                    served = _answer(w, w.served, site, kind, query)
                    cold = _answer(w, w.cold(), site, kind, query)
                assert served["body"] == cold["body"], f"kept != cold: {where}"
            expected = _expected(site, kind, query, served)
            assert _shown(kind, served) == expected, f"served != oracle: {where}"
        _check_realtime(w, site)
    if w.keeps:  # on ClickHouse both are the one statement (this store records no changes)
        _check_overview(w)


def _range(answer: dict[str, Any]) -> Any:
    body = answer["body"]
    return body.get("range") if isinstance(body, dict) else None


def _check_overview(w: World) -> None:
    """Every site at a glance as served (its days and hours kept) equals the cold one (the
    statement), whose figures ``tests/reports/test_overview_kept.py`` counts from the events."""
    assert overview_days.ledger_of(w.served) is not None
    with w.db.read() as conn:
        rows = [dict(row) for row in list_sites(conn, w.owner)]
    for query in PERIODS:
        now = datetime.now(UTC)
        served = overview(w.served, rows, query["range"], None, None, now, wanted=False)
        cold = overview(w.cold(), rows, query["range"], None, None, now, wanted=False)
        assert served == cold, f"overview {query['range']} kept != cold after:\n  " + "\n  ".join(w.history)


def _kept_may_touch(kind: str, query: Mapping[str, str]) -> bool:
    """Whether a kept figure or a kept selection can take part in the report: the time series and
    every table (kept spans and days), and every report but the conversion reports under a filter
    on the visits' events (kept selections)."""
    if kind in UNKEPT:
        return False
    if any(name in query for name in ("page", "event", "goal", "prop")):
        return True
    return kind == "timeseries" or kind == "breakdown"


def _filters(site: SiteModel) -> list[dict[str, str]]:
    out = [{"page": "/pricing"}, {"source": "google.com"}, {"event": "signup"}, {"browser": "!Safari"}]
    out += [{"page": "~doc"}, {"prop": "plan:pro"}]
    out += [{"goal": str(goal_id)} for goal_id in sorted(site.goals)[:2]]
    return out


def _requests(
    site: SiteModel, filters: dict[str, str], on_visits: bool = False
) -> list[tuple[str, dict[str, str]]]:
    days30 = {"range": "30d"}
    out: list[tuple[str, dict[str, str]]] = []
    for period in PERIODS:
        out += [("summary", period), ("timeseries", period)]
    out += [("breakdown", {"dimension": d, "limit": "100", **days30}) for d in DIMENSIONS]
    out += [("breakdown", {"dimension": "pages", "limit": "100", "range": "7d"})]
    out += [("breakdown", {"dimension": "props", "name": "signup", "limit": "100", **days30})]
    out += [("breakdown", {"dimension": "goals", "limit": "100", **p}) for p in (days30, {"range": "7d"})]
    out += [("funnel", days30), ("journeys", days30), ("retention", _last_days(site, 6))]
    out += [("summary", {"range": "30d", "compare": "true", **filters})]
    out += [("timeseries", {"range": "30d", **filters}), ("timeseries", {"range": "today", **filters})]
    out += [
        ("breakdown", {"dimension": d, "limit": "100", **days30, **filters})
        for d in ("pages", "sources", "events")
    ]
    out += [("breakdown", {"dimension": "props", "name": "signup", "limit": "100", **days30, **filters})]
    out += [("breakdown", {"dimension": "goals", "limit": "100", **days30, **filters})]
    out += [("funnel", {**days30, **filters})]
    # Under one filter at every check, twice, a page as the dashboard shows it (a bitmap per shown
    # value): the first request ranks and counts the shown pages' visitors in one read of every
    # day; the second, and those of later checks, unite the days' bitmaps kept since
    # (``table_days.visitors``), each dropped when a write touches its day. The filters are on the
    # visits' events at every check, and on the visits' own fields at every other check.
    out += [("breakdown", {"dimension": "pages", "limit": "10", **days30, "page": "/pricing"})] * 2
    out += [("breakdown", {"dimension": "events", "limit": "10", **days30, "event": "signup"})] * 2
    out += [("breakdown", {"dimension": "props", "name": "signup", "limit": "10", **days30, "page": "/"})] * 2
    if on_visits:
        out += [("breakdown", {"dimension": "pages", "limit": "10", **days30, "source": "google.com"})] * 2
        out += [("breakdown", {"dimension": "events", "limit": "10", **days30, "browser": "!Safari"})] * 2
        out += [
            (
                "breakdown",
                {"dimension": "props", "name": "signup", "limit": "10", **days30, "source": "google.com"},
            )
        ] * 2
    return out


def _last_days(site: SiteModel, days: int) -> dict[str, str]:
    today = datetime.now(UTC).astimezone(ZoneInfo(site.zone)).date()
    return {"range": "custom", "from": (today - timedelta(days=days)).isoformat(), "to": today.isoformat()}


def _answer(
    w: World, store: InProcessStore, site: SiteModel, kind: str, query: dict[str, str]
) -> dict[str, Any]:
    """The report as the console's handler answers it, and the request's report (its period)."""
    allowed = BREAKDOWN if kind == "breakdown" else params.COMMON
    with w.db.read() as conn:
        report = service.Report.open(conn, w.owner, site.id, params.parse(query.items(), allowed), store)
    if kind == "funnel":
        body = funnel_report(report, [parse_step("step", s) for s in FUNNEL], None)
    elif kind == "journeys":
        body = journeys_report(report, parse_step("from", "page:/"), "next", 2)
    elif kind == "retention":
        body = retention_report(report, "day", 4)
    else:
        body = getattr(report, kind)()
    ledger = goal_days.ledger_of(store)
    if ledger is not None:
        ledger.wait()  # the Goals panel's days read in the background
    return {"body": body, "report": report}


def _expected(site: SiteModel, kind: str, query: Mapping[str, str], served: dict[str, Any]) -> Any:
    report: service.Report = served["report"]
    rows = site.events()
    filters = {k: v for k, v in query.items() if k in NAMES}
    goals = site.goals
    span = (report.period.start, report.period.end)
    if kind == "summary":
        previous = report.period.previous()
        return {
            "current": _figures(rows, span, filters, goals),
            "previous": _figures(rows, (previous.start, previous.end), filters, goals)
            if query.get("compare")
            else None,
        }
    if kind == "timeseries":
        return [_figures(rows, s, filters, goals) for s in report.period.buckets()]
    if kind == "funnel":
        return oracle.expected_funnel(oracle.chosen_visits(rows, span, filters, goals), FUNNEL)
    if kind == "journeys":
        found = oracle.expected_journeys(
            oracle.chosen_visits(rows, span, filters, goals), "page:/", "next", 2
        )
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))[:50]
    if kind == "retention":
        later = (span[0], report.now + timedelta(hours=2))
        chosen = oracle.chosen_visits(rows, later, filters, goals)
        first, last = date.fromisoformat(query["from"]), date.fromisoformat(query["to"])
        return oracle.expected_retention(rows, chosen, site.zone, first, last, "day", 4, report.now)
    return _table(rows, span, filters, goals, query["dimension"])


def _shown(kind: str, served: dict[str, Any]) -> Any:
    """The figures of an answer the oracle computes."""
    body = served["body"]
    if kind == "summary":
        return {"current": body["current"], "previous": body["previous"]}
    if kind == "timeseries":
        return [{k: v for k, v in p.items() if k != "time"} for p in body["points"]]
    if kind == "funnel":
        return body["steps"]
    if kind == "journeys":
        return [(tuple(p["steps"]), p["visitors"]) for p in body["paths"]]
    if kind == "retention":
        return body["cohorts"]
    assert body["more"] is False
    if body["dimension"] == "goals":
        return {str(r["goal_id"]): r for r in body["rows"]}
    if body["dimension"] == "props":
        return {
            f"{r['key']}={r['value']}": {k: v for k, v in r.items() if k not in ("key", "value")}
            for r in body["rows"]
        }
    return {r["value"]: {k: v for k, v in r.items() if k != "value"} for r in body["rows"]}


Span = tuple[datetime, datetime]


def _figures(
    rows: list[Event], span: Span, filters: dict[str, str], goals: Mapping[int, Any]
) -> dict[str, Any]:
    """Unfiltered: visitors and pageviews of the span's events, visits that started in it; with
    filters, the selected visits whole."""
    if not filters:
        return helpers.expected_summary(rows, span)
    return _of_visits(oracle.chosen_visits(rows, span, filters, goals))


def _of_visits(chosen: list[Visit]) -> dict[str, Any]:
    return helpers.figures(
        len(chosen),
        len({v.visitor_id for v in chosen}),
        sum(len(v.pageviews) for v in chosen),
        sum(1 for v in chosen if v.bounced),
        sum(v.duration for v in chosen),
    )


VISIT_DIMENSIONS = {
    "sources": ("source", ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")),
    "utm_sources": ("utm_source", ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")),
    "utm_campaigns": ("utm_campaign", ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")),
    "browsers": ("browser", ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")),
    "operating_systems": ("os", ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")),
    "devices": ("device_type", ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")),
    "entry_pages": ("entry", ("visits", "bounce_rate", "visit_duration")),
    "exit_pages": ("exit", ("visits",)),
}


def _value(v: Visit, attribute: str) -> str | None:
    if attribute == "source":
        return v.source
    if attribute in ("entry", "exit"):
        views = v.pageviews
        return (views[0] if attribute == "entry" else views[-1]).path if views else None
    found: str | None = getattr(v.events[0], attribute)
    return found or None


def _table(
    rows: list[Event], span: Span, filters: dict[str, str], goals: Mapping[int, Any], dimension: str
) -> dict[str, Any]:
    if dimension == "goals":
        return {str(k): row for k, row in oracle.expected_goals(rows, span, goals, filters).items()}
    if dimension in VISIT_DIMENSIONS:
        attribute, fields = VISIT_DIMENSIONS[dimension]
        grouped: dict[str, list[Visit]] = {}
        for v in oracle.chosen_visits(rows, span, filters, goals):
            value = _value(v, attribute)
            if value is not None:
                grouped.setdefault(value, []).append(v)
        return {value: {f: _of_visits(vs)[f] for f in fields} for value, vs in grouped.items()}
    counted = oracle.counted_events(rows, span, filters, goals)
    out: dict[str, dict[str, int]] = {}
    people: dict[str, set[str]] = {}
    for e in counted:
        if dimension == "pages" and e.name == "pageview":
            keys, field = [e.path], "pageviews"
        elif dimension == "events" and e.name != "pageview":
            keys, field = [e.name], "events"
        elif dimension == "props" and e.name == "signup":
            keys, field = [f"{k}={v}" for k, v in e.props.items()], "events"
        else:
            continue
        for key in keys:
            out.setdefault(key, {"visitors": 0, field: 0})[field] += 1
            people.setdefault(key, set()).add(e.visitor_id)
    for key, row in out.items():
        row["visitors"] = len(people[key])
    return out


def _check_realtime(w: World, site: SiteModel) -> None:
    now = datetime.now(UTC)
    with w.db.read() as conn:
        row = get_site(conn, w.owner, site.id)
    served = service.realtime_of(row, w.served, now)
    after = "\n  ".join(w.history)
    assert served == service.realtime_of(row, w.cold(), now), f"realtime: kept != cold, after:\n  {after}"
    since, until = now - service.REALTIME_WINDOW, now + timedelta(minutes=1)
    inside = [e for e in site.events() if since <= e.time < until]
    views = [e for e in inside if e.name == "pageview"]
    pages: dict[str, set[str]] = {}
    for e in views:
        pages.setdefault(e.path, set()).add(e.visitor_id)
    first = now.replace(second=0, microsecond=0) - timedelta(minutes=service.REALTIME_MINUTES - 1)
    minutes = []
    for n in range(service.REALTIME_MINUTES):
        a = first + timedelta(minutes=n)
        there = [e for e in site.events() if a <= e.time < a + timedelta(minutes=1)]
        minutes.append(
            {
                "start": a.isoformat(),
                "visitors": len({e.visitor_id for e in there}),
                "pageviews": sum(1 for e in there if e.name == "pageview"),
            }
        )
    ranked = sorted(((len(v), p) for p, v in pages.items()), key=lambda x: (-x[0], x[1]))[:10]
    assert served == {
        "site_id": site.id,
        "window_seconds": 300,
        "visitors": len({e.visitor_id for e in inside}),
        "pageviews": len(views),
        "pages": [{"value": p, "visitors": n} for n, p in ranked],
        "minutes": minutes,
    }, f"realtime: served != oracle, after:\n  {after}"
