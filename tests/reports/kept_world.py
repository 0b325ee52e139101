"""The world the kept-figures property test drives: a log database, an analytics store and the
store process's own parts run in the test's process (the feeder, the maintenance's tasks, deleted
sites and trim, a rebuild), the reports service over that store as the server runs it (``served``:
its figures kept between requests, ``Dialect.exact_below`` set low so that every kept path is
taken), and a model of what the log acknowledged (``SiteModel.rows``) for the oracle.

Every write goes through the code the server and the store process run: events into the log's
``events`` table (as ingest's writer commits them), ``visitors.rights.erase``, ``visitors.retention``,
``sites.service`` and ``goals.service``, then the store process's ``Feeder.step`` and ``Maintenance``.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo

from sqlalchemy import insert, select

from sightline.database import Database
from sightline.database.schema import events, users
from sightline.goals import service as goals_service
from sightline.recordings.service import Recordings
from sightline.sites import service as sites_service
from sightline.store.dialects import Dialect
from sightline.store.engines import ClickHouse, Embedded, Engine
from sightline.store.feed import Feeder, key_of
from sightline.store.kept_files import Files
from sightline.store.maintenance import Maintenance
from sightline.store.ordering import Ordering
from sightline.visitors import rights
from sightline.visitors.retention import Retention
from tests.reports.helpers import Event

PAGES = ["/", "/pricing", "/docs", "/blog/hello", "/signup"]
SOURCES = [None, None, "google.com", "news.ycombinator.com"]
BROWSERS = [("Chrome", "Windows", "desktop"), ("Safari", "iOS", "mobile"), ("Firefox", "Linux", "desktop")]
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Pacific/Auckland"]
GOALS: list[dict[str, Any]] = [
    {"name": "Pricing page", "kind": "page", "match": "exact", "path": "/pricing"},
    {"name": "Blog", "kind": "page", "match": "prefix", "path": "/blog/"},
    {"name": "Any docs", "kind": "page", "match": "glob", "path": "/d*s"},
    {"name": "Signup", "kind": "event", "event": "signup"},
    {"name": "Pro signup", "kind": "event", "event": "signup", "prop": {"key": "plan", "value": "pro"}},
    {
        "name": "Purchase",
        "kind": "event",
        "event": "purchase",
        "revenue": {"prop": "amount", "currency": "EUR"},
    },
]
MAX_AGE = timedelta(hours=24)  # the oldest event ingest accepts (``ingest.rows.MAX_AGE_MS``)
POOL = 70  # visitor codes per site
LOW_BITS = 0xFFFF  # the smallest bitmap's bits: a site's codes differ there, so estimates are exact
FEED_BATCH = 40  # small batches: a visit's events often reach the store in several


class InProcessStore:
    """What ``reports.service.Report`` asks of the store, answered by the engine in this process,
    as the store process answers the server: ``query``, ``columns``, and ``keep`` and the
    overview's kept days (``store.kept_days``) on the embedded engine."""

    def __init__(self, engine: Engine, dialect: Dialect, keeps: bool) -> None:
        self.engine = engine
        self.dialect = dialect
        if keeps:
            self.keep = self._keep
            self.changes = self._changes
        if keeps and isinstance(engine, Embedded):
            self.kept_days = self._kept_days
            self.keep_days = self._keep_days

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        return self.engine.query(sql, params)

    def _files(self) -> Files:
        assert isinstance(self.engine, Embedded)
        return Files(self.engine.days.files)

    def _kept_days(self, asked: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int, Any]]:
        assert isinstance(self.engine, Embedded)
        return self._files().opened(self.engine.kept_days(asked))

    def _keep_days(self, epoch: str, rows: list[tuple[int, int, int, int, int, Any]]) -> int:
        assert isinstance(self.engine, Embedded)
        return self.engine.keep_days(epoch, self._files().named(rows))

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.engine.columns(sql, params)

    def _keep(
        self,
        sql: str,
        params: dict[str, Any],
        site_id: int | None = None,
        span: tuple[int, int] | None = None,
    ) -> str | None:
        return self.engine.keep(sql, params, site_id, span) if isinstance(self.engine, Embedded) else None

    def _changes(self, site_id: int, after: int) -> dict[str, Any]:
        return self.engine.changes.since(site_id, after)


class _NoRecordings:
    """The erasure's recordings part: these sites record nothing."""

    def delete(self, ids: list[str]) -> None:
        assert not ids


@dataclass
class Logged:
    id: int
    event: Event
    in_log: bool = True  # False once the log's trim took it (the store still holds it)


@dataclass
class SiteModel:
    id: int
    zone: str = "UTC"
    goals: dict[int, dict[str, Any]] = field(default_factory=dict)
    rows: list[Logged] = field(default_factory=list)  # in log order
    codes: list[str] = field(default_factory=list)

    def events(self) -> list[Event]:
        return [r.event for r in self.rows]


class World:
    def __init__(
        self, db: Database, engine: Engine, backend: str, seed: int, exact_below: int, log_days: int
    ) -> None:
        self.db, self.engine, self.backend = db, engine, backend
        self.rng = random.Random(seed)
        self.log_days = log_days
        self.keeps = isinstance(engine, Embedded)
        self.dialect = replace(engine.dialect, exact_below=exact_below)
        self.served = InProcessStore(engine, self.dialect, self.keeps)
        self.feeder = Feeder(db, engine, FEED_BATCH)
        self.maintenance = Maintenance(db, engine, self.feeder, log_days)
        self.ordering = Ordering(engine) if isinstance(engine, Embedded) else None
        self.sessions = 0
        self.sites: list[SiteModel] = []
        self.history: list[str] = []
        with db.begin() as conn:
            self.owner = int(
                conn.execute(
                    insert(users)
                    .values(email="owner@kept.example", password_hash="unused", created_at=datetime.now(UTC))
                    .returning(users.c.id)
                ).scalar_one()
            )

    def cold(self) -> InProcessStore:
        """A store seen by a server that has kept nothing, and that keeps no selection."""
        return InProcessStore(self.engine, self.dialect, keeps=False)

    def said(self, text: str) -> None:
        self.history.append(text)

    # -- sites, goals, zones ---------------------------------------------------------------

    def add_site(self) -> SiteModel:
        with self.db.begin() as conn:
            n = len(self.history) + len(self.sites)
            row = sites_service.create_site(
                conn, self.owner, f"Site {n}", f"s{uuid.uuid4().hex[:10]}.example"
            )
        site = SiteModel(int(row["id"]))
        seen: set[int] = set()
        n = 0
        while len(site.codes) < POOL:
            code = f"visitor-{site.id}-{n}"
            n += 1
            if (low := key_of(site.id, code) & LOW_BITS) not in seen:
                seen.add(low)
                site.codes.append(code)
        self.sites.append(site)
        for body in self.rng.sample(GOALS, 4):
            self._create_goal(site, body)
        self.said(f"add site {site.id}")
        return site

    def _create_goal(self, site: SiteModel, body: dict[str, Any]) -> None:
        with self.db.begin() as conn:
            made = goals_service.create_goal(conn, self.owner, site.id, body)
        site.goals[int(made["id"])] = dict(body)

    def edit_goals(self, site: SiteModel) -> None:
        choice = self.rng.choice(["create", "update", "delete"])
        unused = [g for g in GOALS if g["name"] not in {b["name"] for b in site.goals.values()}]
        if choice == "create" and unused:
            body = self.rng.choice(unused)
            self._create_goal(site, body)
            self.said(f"site {site.id}: goal created {body['name']!r}")
        elif choice == "update" and site.goals:
            goal_id = self.rng.choice(sorted(site.goals))
            change: dict[str, Any] = (
                {"kind": "page", "match": "prefix", "path": self.rng.choice(["/d", "/p", "/"])}
                if site.goals[goal_id]["kind"] == "page"
                else {"event": self.rng.choice(["signup", "purchase"])}
            )
            with self.db.begin() as conn:
                goals_service.update_goal(conn, self.owner, goal_id, change)
            site.goals[goal_id] = {**site.goals[goal_id], **change}
            self.said(f"site {site.id}: goal {goal_id} changed to {change}")
        elif site.goals:
            goal_id = self.rng.choice(sorted(site.goals))
            with self.db.begin() as conn:
                goals_service.delete_goal(conn, self.owner, goal_id)
            del site.goals[goal_id]
            self.said(f"site {site.id}: goal {goal_id} deleted")

    def change_zone(self, site: SiteModel) -> None:
        zone = self.rng.choice([z for z in ZONES if z != site.zone])
        with self.db.begin() as conn:
            sites_service.update_site(conn, self.owner, site.id, {"timezone": zone})
        site.zone = zone
        self.said(f"site {site.id}: time zone {zone}")

    def delete_site(self, site: SiteModel) -> None:
        with self.db.begin() as conn:
            sites_service.delete_site(conn, self.owner, site.id)
        self.sites.remove(site)
        self.said(f"site {site.id} deleted")

    # -- events ----------------------------------------------------------------------------

    def _event(
        self, site: SiteModel, at: datetime, visitor: str, session: str, first: bool, look: Any
    ) -> Event:
        source, (browser, os_name, device), campaign = look
        custom = not first and self.rng.random() < 0.35
        name = self.rng.choice(["signup", "signup", "purchase"]) if custom else "pageview"
        props: dict[str, Any] = {}
        if name == "signup":
            props = {"plan": self.rng.choice(["free", "pro"])}
        elif name == "purchase":
            props = {"amount": self.rng.choice([19.99, 5, 120.5]), "plan": "pro"}
        return Event(
            site.id,
            at,
            visitor,
            session,
            name,
            self.rng.choice(PAGES),
            source if first else None,
            "newsletter" if campaign else None,
            "email" if campaign else None,
            "launch" if campaign else None,
            browser,
            os_name,
            device,
            props,
        )

    def visit(self, site: SiteModel, start: datetime, now: datetime) -> list[Event]:
        """One visit's events from ``start``: a few, minutes apart (never past ``now``)."""
        self.sessions += 1
        session = f"{site.id}-s{self.sessions}"
        visitor = self.rng.choice(site.codes)
        look = (self.rng.choice(SOURCES), self.rng.choice(BROWSERS), self.rng.random() < 0.3)
        out, at = [], start
        for i in range(self.rng.choice([1, 1, 2, 3, 5])):
            if at > now:
                break
            out.append(self._event(site, at, visitor, session, i == 0, look))
            at += timedelta(seconds=self.rng.randrange(20, 900))
        return out

    def history_of(self, site: SiteModel, visits: int, days: int) -> list[Event]:
        now = datetime.now(UTC)
        out: list[Event] = []
        for _ in range(visits):
            out.extend(self.visit(site, now - timedelta(seconds=self.rng.randrange(days * 86400)), now))
        return out

    def fresh(self, site: SiteModel) -> list[Event]:
        """What ingest may take now: visits of the last minutes and hours, late ones up to the
        oldest age it accepts, visits across the site's midnight and across an hour, and late
        events of visits already stored (before their first event, or after their last)."""
        now = datetime.now(UTC)
        oldest = now - MAX_AGE + timedelta(minutes=1)
        out: list[Event] = []
        for _ in range(self.rng.randrange(3, 8)):
            kind = self.rng.choice(["now", "now", "late", "oldest", "midnight", "hour"])
            if kind == "now":
                start = now - timedelta(seconds=self.rng.randrange(1, 1800))
            elif kind == "late":
                start = now - timedelta(seconds=self.rng.randrange(1800, 23 * 3600))
            elif kind == "oldest":
                start = oldest
            else:
                local = now.astimezone(ZoneInfo(site.zone))
                edge = local.replace(minute=0, second=0, microsecond=0)
                if kind == "midnight":
                    edge = edge.replace(hour=0)
                start = edge.astimezone(UTC) - timedelta(minutes=self.rng.randrange(1, 10))
                start = max(start, oldest)
            out.extend(self.visit(site, start, now))
        for row in self.rng.sample(site.rows, min(3, len(site.rows))):
            e = row.event
            times = [r.event.time for r in site.rows if r.event.session_id == e.session_id]
            at = (
                min(times) - timedelta(seconds=self.rng.randrange(5, 1200))
                if self.rng.random() < 0.5
                else max(times) + timedelta(seconds=self.rng.randrange(5, 600))
            )
            if oldest <= at <= now:
                late = replace(e, time=at, name="pageview", path=self.rng.choice(PAGES), props={})
                out.append(replace(late, referrer_source=None))
        return out

    def ingest(self, site: SiteModel, rows: list[Event]) -> None:
        """The events as ingest's writer commits them to the log (one transaction)."""
        with self.db.begin() as conn:
            for e in rows:
                new_id = conn.execute(insert(events).values(**e.row()).returning(events.c.id)).scalar_one()
                site.rows.append(Logged(int(new_id), e))

    # -- erasure, retention, trim, rebuild -------------------------------------------------

    def erase(self, site: SiteModel, code: str) -> None:
        rights.erase(self.db, cast(Recordings, _NoRecordings()), site.id, code, None)
        site.rows = [r for r in site.rows if r.event.visitor_id != code]

    def retention_cut(self, site: SiteModel, days: int) -> None:
        now = datetime.now(UTC)
        with self.db.begin() as conn:
            sites_service.update_site(conn, self.owner, site.id, {"retention_days": days})
        Retention(self.db, None, clock=lambda: now).run()
        with self.db.begin() as conn:
            sites_service.update_site(conn, self.owner, site.id, {"retention_days": None})
        cut = now - timedelta(days=days)
        site.rows = [r for r in site.rows if r.event.time >= cut]

    def trim(self) -> int:
        """The log's retention (``--event-log-retention-days``): the store keeps what it trims."""
        removed = self.maintenance.trim()
        with self.db.read() as conn:
            left = {int(i) for i in conn.execute(select(events.c.id)).scalars()}
        for site in self.sites:
            for r in site.rows:
                r.in_log = r.id in left
        return removed

    def rebuild(self) -> None:
        """``sightline rebuild-store``: the store emptied and fed again from the whole log (what
        the log trimmed is gone from the reports)."""
        self.engine.reset()
        feeder = Feeder(self.db, self.engine)
        try:
            while feeder.step():
                pass
        finally:
            feeder.close()
        for site in self.sites:
            site.rows = [r for r in site.rows if r.in_log]

    def settle(self) -> None:
        """The store process's loop until the store holds the log: feeding steps, then the
        maintenance's tasks and deleted sites, and the rewrite in site order."""
        while True:
            fed = 0
            while step := self.feeder.step():
                fed += step
            done = self.maintenance.apply_tasks() + self.maintenance.purge_deleted_sites()
            if self.ordering is not None:
                self.ordering.run()
            if not fed and not done:
                return

    def close(self) -> None:
        self.feeder.close()
        if isinstance(self.engine, Embedded):
            self.engine.close()


def open_engine(kind: str, directory: Path, clickhouse_url: str | None) -> Engine:
    """DuckDB in ``directory``, or ClickHouse at ``clickhouse_url`` (a new database of the tests'
    ClickHouse: the HTTP stand-in or a real server)."""
    if kind == "duckdb":
        return Embedded(directory / "data", 256)
    assert clickhouse_url is not None
    return ClickHouse(clickhouse_url)
