"""CPU of the first filtered dashboard request after each feed step, and of the step itself.

Under a filter on the visits' events (page, event, goal, prop), the store keeps the selected
visits between requests (``store.kept_selections``) and brings them up to date after each feed
step; the first request after a step pays for it. This benchmark measures that in one process
holding the store, as the store process and the server run it (the report service and the
engine with its kept selections): the dashboard benchmark's log (``BENCH_EVENTS``, default
2,000,000, kept in ``BENCH_DIR`` or ``~/.cache/sightline-bench/reports-N``) is copied, with the
store built from it, to a temporary directory (the kept one is never written to), live traffic
arrives (``BENCH_REFRESH_WARM`` events, default 300,000, over the last 20 minutes from 50,000
visitors, sessions of 30 minutes, as ``bench/feeder.py`` sends them), then ``BENCH_REFRESH_ROUNDS``
rounds (default 15) of: 1,000 events (half a second at 2,000 events/s), one feed step, the 30-day
summary with its comparison under ``page=/pricing``, then the same under ``event=signup``; CPU of
every thread per step, per first request and per refresh of the kept selection (median, p90).
The bitmap threshold is lowered to 100,000 events so that a 2 M-event store takes the paths of
a 10 M-event one. ``BENCH_REFRESH_FILTERS`` picks the filters (of ``page``, ``event``, ``source``;
default ``page,event``), ``BENCH_REFRESH_TABLE`` (``pages``, ``events``) asks that 30-day table's
first 10 rows instead of the summary. Compare two versions by running it alternately on each
(``PYTHONPATH``).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.reports import helpers
from tests.reports.kept_world import InProcessStore

from bench.bench_reports import prepare
from bench.workdir import work_dir
from sightline.database import open_database
from sightline.reports import params, service
from sightline.store.dialects import DUCKDB
from sightline.store.engines import Embedded
from sightline.store.feed import Feeder

OWNER = 1  # the dashboard benchmark's owner
PATHS = ["/", "/pricing", "/docs", "/blog/a", "/blog/b", "/about", "/signup"]
FILTERS = {"page": {"page": "/pricing"}, "event": {"event": "signup"}, "source": {"source": "google.com"}}
CHOSEN = os.environ.get("BENCH_REFRESH_FILTERS", "page,event").split(",")  # of ``FILTERS``
TABLE = os.environ.get("BENCH_REFRESH_TABLE", "")  # a table (pages, events) asked instead of the summary
STEP_EVENTS = 1000  # half a second at 2,000 events/s
EXACT_BELOW = 100_000  # a 2 M-event store's 30 days take the 10 M paths


def traffic(site: int, count: int, now: datetime, seconds: float, rng: random.Random) -> list[helpers.Event]:
    """``count`` events of the last ``seconds``: 50,000 visitors, a session per 30 minutes, 3 % signups."""
    out = []
    for _ in range(count):
        at = now - timedelta(seconds=rng.random() * seconds)
        visitor = f"feed-{rng.randrange(50_000)}"
        session = f"{visitor}-{int(at.timestamp() // 1800)}"
        name, path = ("signup", "/signup") if rng.random() < 0.03 else ("pageview", rng.choice(PATHS))
        row = helpers.pageview(site, at, visitor, path, "google.com")
        out.append(replace(row, session_id=session, name=name))
    return out


def cpu_ms(work: Callable[[], Any]) -> float:
    started = time.process_time()
    work()
    return (time.process_time() - started) * 1000


def main() -> int:
    count = int(os.environ.get("BENCH_EVENTS", "2000000"))
    warm = int(os.environ.get("BENCH_REFRESH_WARM", "300000"))
    rounds = int(os.environ.get("BENCH_REFRESH_ROUNDS", "15"))
    source, _ = work_dir(f"reports-{count}", count >= 1_000_000)
    data = source / "data"
    data.mkdir(parents=True, exist_ok=True)
    site = prepare(data, count)
    run = Path(tempfile.mkdtemp(prefix="sightline-bench-kept-refresh-")) / "data"
    shutil.copytree(data, run)
    db = open_database(f"sqlite:///{run / 'sightline.db'}")
    engine = Embedded(run, 4096)
    feeder = Feeder(db, engine)
    try:
        feeder.catch_up()  # the log's events (a store built with the dashboard benchmark: none)
        rng = random.Random(26)
        now = datetime.now(UTC)
        for _ in range(0, warm, 50_000):
            helpers.insert_events(db, traffic(site, min(50_000, warm), now, 20 * 60, rng))
        feeder.catch_up()
        store = InProcessStore(engine, replace(DUCKDB, exact_below=EXACT_BELOW), True)
        refresh = [0.0]
        keep = engine.kept.keep

        def timed_keep(*args: Any) -> str:
            started = time.process_time()
            try:
                return keep(*args)
            finally:
                refresh[0] += (time.process_time() - started) * 1000

        engine.kept.keep = timed_keep  # type: ignore[method-assign, assignment]

        def summary(filters: dict[str, str]) -> None:
            if TABLE:  # the table as the dashboard asks it: its first 10 rows
                query = {"range": "30d", "dimension": TABLE, "limit": "10", **filters}
                allowed: tuple[str, ...] = (*params.COMMON, "dimension", "limit")
            else:
                query, allowed = {"range": "30d", "compare": "true", **filters}, params.COMMON
            with db.read() as conn:
                report = service.Report.open(conn, OWNER, site, params.parse(query.items(), allowed), store)
            report.breakdown() if TABLE else report.summary()

        figures: dict[str, dict[str, list[float]]] = {
            name: {"feed step": [], "first request": [], "refresh": []} for name in CHOSEN
        }
        for name in CHOSEN:  # the selections read once: a dashboard already open
            summary(FILTERS[name])
        for _ in range(rounds):
            for name in CHOSEN:
                filters = FILTERS[name]
                helpers.insert_events(db, traffic(site, STEP_EVENTS, datetime.now(UTC), 0.5, rng))
                figures[name]["feed step"].append(cpu_ms(feeder.step))
                refresh[0] = 0.0
                figures[name]["first request"].append(cpu_ms(lambda f=filters: summary(f)))  # type: ignore[misc]
                figures[name]["refresh"].append(refresh[0])
        print(
            f"CPU ms per feed step of {STEP_EVENTS:,} events and per first 30-day {TABLE or 'summary'} "
            f"after it ({rounds} rounds)"
        )
        for name, measured in figures.items():
            for what, values in measured.items():
                ordered = sorted(values)
                p90 = ordered[int(0.9 * (len(ordered) - 1))]
                print(f"{name:6} {what:14} median {statistics.median(ordered):7.1f}  p90 {p90:7.1f}")
    finally:
        feeder.close()
        engine.close()
        db.dispose()
        shutil.rmtree(run.parent, ignore_errors=True)
    return 0
