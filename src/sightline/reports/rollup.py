"""The rollup job: folds new events (by id, after a watermark) into visits and hourly/daily rollups.

One call of ``fold`` is one transaction: read up to ``batch`` events with ``id > watermark``,
update the visits they belong to, add their figures (and the change of every touched visit's
figures) to the rollup rows, and move the watermark. The watermark moves with a conditional
UPDATE in the same transaction, so a batch is folded exactly once even if two jobs race or the
process dies halfway: the job is idempotent and catches up after a restart from where it left.

Ingest's hot path is not involved: it only appends events.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    Float,
    cast,
    extract,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.sql.elements import ColumnElement

from sightline.reports import localdays, writes
from sightline.reports.sketch import visitor_hash
from sightline.reports.writes import Totals
from sightline.storage import Database
from sightline.storage.schema import events, report_daily, report_hourly, report_state, report_visits
from sightline.storage.tables.reports import VALUE_MAX
from sightline.storage.types import utcnow

JOB = "rollup"
NONE = "(none)"
PAGEVIEW = "pageview"
VISIT_DIMS = ("source", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device")
CHUNK = 5000
ANALYZE_EVERY = 200_000

Key = tuple[int, str, int, str]  # site_id, dim, hour, value


def epoch_seconds(column: Any, dialect: str) -> ColumnElement[float]:
    """Seconds since the epoch of a UTC timestamp column, computed by the database (fast)."""
    if dialect == "sqlite":
        return (func.julianday(column) - 2440587.5) * 86400.0
    return cast(extract("epoch", column), Float)


def cut(value: str | None) -> str:
    return value[:VALUE_MAX] if value else ""


@dataclass(slots=True)
class Visit:
    visitor_id: str
    started: float
    ended: float
    pageviews: int
    entry_path: str | None
    entry_at: float | None
    exit_path: str | None
    exit_at: float | None
    attrs: tuple[str, ...]  # VISIT_DIMS, in order
    before: list[tuple[str, str, int, int, int]] | None = None  # contributions as loaded
    started_before: float = 0.0  # start as loaded
    new: bool = False

    @property
    def duration(self) -> int:
        """Whole seconds from the visit's first event to its last."""
        return max(0, round(self.ended - self.started))

    def contributions(self) -> list[tuple[str, str, int, int, int]]:
        """(dim, value, visits, bounces, duration) this visit adds at its start hour."""
        bounce = 1 if self.pageviews <= 1 else 0
        duration = self.duration
        out = [("total", "", 1, bounce, duration)]
        out += [
            (dim, value, 1, bounce, duration)
            for dim, value in zip(VISIT_DIMS, self.attrs, strict=True)
            if value
        ]
        if self.entry_path is not None:
            out.append(("entry", self.entry_path, 1, bounce, duration))
        if self.exit_path is not None:
            out.append(("exit", self.exit_path, 1, 0, 0))
        return out


class RollupJob:
    def __init__(self, db: Database, batch: int = 20000) -> None:
        self.db = db
        self.batch = batch
        self._hashes: dict[str, int] = {}
        self.folded_events = 0
        self._analyzed = False
        self._unanalyzed = 0

    def watermark(self, conn: Connection) -> int | None:
        """The id of the last folded event; None before the first batch."""
        value = conn.execute(select(report_state.c.last_event_id).where(report_state.c.name == JOB)).scalar()
        return None if value is None else int(value)

    def fold(self) -> int:
        """Folds the next batch of events; returns how many it folded (0: caught up).

        Everything is read and computed first, outside any write transaction; the writes then
        take one short transaction, so ingest's commits never wait long for the job.
        """
        with self.db.read() as conn:
            state = self.watermark(conn)
            mark = state or 0
            rows = conn.execute(
                select(
                    events.c.id,
                    events.c.site_id,
                    epoch_seconds(events.c.time, self.db.dialect),
                    events.c.visitor_id,
                    events.c.session_id,
                    events.c.name,
                    events.c.path,
                    events.c.referrer_source,
                    events.c.utm_source,
                    events.c.utm_medium,
                    events.c.utm_campaign,
                    events.c.browser,
                    events.c.os,
                    events.c.device_type,
                    events.c.props,
                )
                .where(events.c.id > mark)
                .order_by(events.c.id)
                .limit(self.batch)
            ).all()
            if not rows:
                return 0
            totals = Totals()
            visits = self._load_visits(conn, {(r[1], r[4]) for r in rows})
            self._fold_events(rows, visits, totals)
            for (site_id, _), visit in visits.items():
                self._visit_delta(site_id, visit, totals)
            plans = self._plan_rollups(conn, totals)
            zones = localdays.zones_of(conn, {r[1] for r in rows})
            local, stale = writes.local_totals(totals, zones)
            plans.append((report_daily, writes.plan(conn, report_daily, local)))
        with self.db.begin() as conn:
            self._save_visits(conn, visits)
            for table, plan in plans:
                writes.apply(conn, table, *plan)
            for site_id, zone in stale.items():
                localdays.rebuild(conn, site_id, zone)
            newest = rows[-1][0]
            if state is None:  # a racing first batch fails on the primary key
                conn.execute(insert(report_state).values(name=JOB, last_event_id=newest, updated_at=utcnow()))
            else:
                moved = conn.execute(
                    update(report_state)
                    .where(report_state.c.name == JOB, report_state.c.last_event_id == mark)
                    .values(last_event_id=newest, updated_at=utcnow())
                )
                if moved.rowcount != 1:
                    raise RuntimeError("another rollup job moved the watermark; this batch is rolled back")
        self.folded_events += len(rows)
        self._analyze(len(rows))
        return len(rows)

    def _analyze(self, folded: int) -> None:
        """PostgreSQL plans the filtered reports from table statistics: refresh them as data grows
        (at the first fold, then every ANALYZE_EVERY events), not only when autovacuum gets to it."""
        if self.db.dialect != "postgresql":
            return
        self._unanalyzed += folded
        if self._analyzed and self._unanalyzed < ANALYZE_EVERY:
            return
        with self.db.begin() as conn:
            conn.execute(text("ANALYZE events, report_visits, report_hourly, report_daily"))
        self._analyzed, self._unanalyzed = True, 0

    def catch_up(self) -> int:
        total = 0
        while folded := self.fold():
            total += folded
        return total

    def _hash(self, visitor_id: str) -> int:
        value = self._hashes.get(visitor_id)
        if value is None:
            if len(self._hashes) > 200_000:
                self._hashes.clear()
            value = self._hashes[visitor_id] = visitor_hash(visitor_id)
        return value

    def _fold_events(self, rows: Sequence[Any], visits: dict[tuple[int, str], Visit], totals: Totals) -> None:
        add = totals.add
        for _, site_id, seconds, visitor_id, session_id, name, path, *rest in rows:
            source, utm_s, utm_m, utm_c, browser, os_name, device, props = rest
            seconds = float(seconds)
            hour = int(seconds // 3600)
            visitor = self._hash(visitor_id)
            visit = visits.get((site_id, session_id))
            pageview = name == PAGEVIEW
            page = cut(path)
            if visit is None:
                visit = visits[(site_id, session_id)] = Visit(
                    visitor_id,
                    seconds,
                    seconds,
                    0,
                    None,
                    None,
                    None,
                    None,
                    (
                        cut(source) or NONE,
                        cut(utm_s),
                        cut(utm_m),
                        cut(utm_c),
                        browser or NONE,
                        os_name or NONE,
                        device or NONE,
                    ),
                    new=True,
                )
            visit.started = min(visit.started, seconds)
            visit.ended = max(visit.ended, seconds)
            pv, ev = (1, 0) if pageview else (0, 1)
            add((site_id, "total", hour, ""), pv, ev, visitor)
            for dim, value in zip(VISIT_DIMS, visit.attrs, strict=True):
                if value:
                    add((site_id, dim, hour, value), pv, ev, visitor)
            if pageview:
                visit.pageviews += 1
                add((site_id, "page", hour, page), 1, 0, visitor)
                if visit.entry_at is None or seconds < visit.entry_at:
                    visit.entry_path, visit.entry_at = page, seconds
                if visit.exit_at is None or seconds >= visit.exit_at:
                    visit.exit_path, visit.exit_at = page, seconds
            else:
                event_name = cut(name)
                add((site_id, "event", hour, event_name), 0, 1, visitor)
                for key, value in props_of(props):
                    add((site_id, "prop", hour, cut(f"{event_name}\x1f{key}\x1f{value}")), 0, 1, visitor)

    def _visit_delta(self, site_id: int, visit: Visit, totals: Totals) -> None:
        before = visit.before or []
        after = visit.contributions()
        start_after = int(visit.started // 3600)
        start_before = int(visit.started_before // 3600)
        if before == after and start_before == start_after:
            return
        for dim, value, n, bounces, duration in before:
            totals.add_visit((site_id, dim, start_before, value), -n, -bounces, -duration)
        for dim, value, n, bounces, duration in after:
            totals.add_visit((site_id, dim, start_after, value), n, bounces, duration)

    def _load_visits(self, conn: Connection, keys: Iterable[tuple[int, str]]) -> dict[tuple[int, str], Visit]:
        found: dict[tuple[int, str], Visit] = {}
        v = report_visits.c
        by_site: dict[int, list[str]] = {}
        for site_id, session_id in keys:
            by_site.setdefault(site_id, []).append(session_id)
        chunks = [
            (site_id, sessions[i : i + CHUNK])
            for site_id, sessions in by_site.items()
            for i in range(0, len(sessions), CHUNK)
        ]
        for site_id, chunk in chunks:
            query = select(
                v.site_id,
                v.session_id,
                v.visitor_id,
                epoch_seconds(v.started_at, self.db.dialect),
                epoch_seconds(v.ended_at, self.db.dialect),
                v.pageviews,
                v.entry_path,
                epoch_seconds(v.entry_at, self.db.dialect),
                v.exit_path,
                epoch_seconds(v.exit_at, self.db.dialect),
                *(getattr(v, dim) for dim in VISIT_DIMS),
            ).where(v.site_id == site_id, v.session_id.in_(chunk))
            for row in conn.execute(query):
                visit = Visit(
                    row[2],
                    float(row[3]),
                    float(row[4]),
                    row[5],
                    row[6],
                    None if row[7] is None else float(row[7]),
                    row[8],
                    None if row[9] is None else float(row[9]),
                    tuple(row[10:]),
                )
                visit.before = visit.contributions()
                visit.started_before = visit.started
                found[(row[0], row[1])] = visit
        return found

    def _save_visits(self, conn: Connection, visits: dict[tuple[int, str], Visit]) -> None:
        fresh: list[dict[str, Any]] = []
        changed: list[dict[str, Any]] = []
        for (site_id, session_id), visit in visits.items():
            row = {
                "site_id": site_id,
                "session_id": session_id,
                "started_at": visit.started,
                "ended_at": visit.ended,
                "pageviews": visit.pageviews,
                "duration": visit.duration,
                "entry_path": visit.entry_path,
                "entry_at": visit.entry_at,
                "exit_path": visit.exit_path,
                "exit_at": visit.exit_at,
            }
            if visit.new:
                row["visitor_id"] = visit.visitor_id
                row.update(zip(VISIT_DIMS, visit.attrs, strict=True))
                fresh.append(row)
            else:
                changed.append(row)
        times = {"started_at", "ended_at", "entry_at", "exit_at"}
        if fresh:
            columns = tuple(fresh[0])
            writes.many(
                conn,
                f"INSERT INTO report_visits ({', '.join(columns)}) VALUES ({{marks}})",  # noqa: S608 (fixed names, bound values)
                columns,
                [writes.values_of(conn, r, columns, times) for r in fresh],
            )
        if changed:
            columns = (
                "started_at",
                "ended_at",
                "pageviews",
                "duration",
                "entry_path",
                "entry_at",
                "exit_path",
                "exit_at",
            )
            sets = ", ".join(f"{n} = {{mark}}" for n in columns)
            keys = ("site_id", "session_id")
            writes.many(
                conn,
                f"UPDATE report_visits SET {sets} WHERE site_id = {{mark}} AND session_id = {{mark}}",  # noqa: S608 (fixed names, bound values)
                columns,
                [writes.values_of(conn, r, columns + keys, times) for r in changed],
            )

    def _plan_rollups(self, conn: Connection, totals: Totals) -> list[tuple[Any, writes.Plan]]:
        daily = Totals()
        for (site_id, dim, hour, value), row in totals.counts.items():
            key = (site_id, dim, hour // 24, value)
            target = daily.counts.get(key)
            if target is None:
                daily.counts[key] = list(row)
                daily.visitors[key] = set(totals.visitors[(site_id, dim, hour, value)])
            else:
                for i in range(5):
                    target[i] += row[i]
                daily.visitors[key] |= totals.visitors[(site_id, dim, hour, value)]
        return [
            (report_hourly, writes.plan(conn, report_hourly, totals)),
            (report_daily, writes.plan(conn, report_daily, daily)),
        ]


def props_of(raw: str | None) -> list[tuple[str, str]]:
    if not raw:
        return []
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(parsed, dict):
        return []
    out = []
    for key, value in parsed.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str):
            text = value
        else:
            text = orjson.dumps(value).decode()
        out.append((str(key), text))
    return out
