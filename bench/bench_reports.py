"""Dashboard latency on a site with 10 million events in the analytics store, and its exactness.

Generates ``BENCH_EVENTS`` events (default 10,000,000) over 60 days for one site in
America/New_York into the SQLite log (``bench/reports_data.py``: bulk inserts), starts
the store from it once with the store process's feed (timed, as an upgrade from a large log
would be), then ``sightline serve`` on a copy of both as users run it, signs in, and times every request the
dashboard makes (summary and time series with comparison, every breakdown, realtime) for today,
7 days and 30 days, then the same requests under filters (source, page, event, and page with
source) for 7 and 30 days, twice:

- **while fed (the headline)**: a separate process sends ``BENCH_FEED_RATE`` events a second
  (default 2,000) as the SDK does (``bench/feeder.py``), so the store feeds every half second and
  drops the kept figures of the hours it touched, as on a live site; p50/p95 over
  ``BENCH_FED_REPEAT`` rounds (default 10), the rate the server acknowledged, and each request's
  first time: this part runs first, so that is the request's first since the server started (the
  cold first request);
- **at rest (a diagnostic)**, once the store caught up with the feed: nothing arrives, and the
  same requests repeat ``BENCH_REPEAT`` times (default 20), so after the first round they are
  answered from what the store keeps between identical requests. No user meets these figures on
  a site that receives traffic.

Unique visitors from the API are compared with ``COUNT(DISTINCT visitor_id)`` over the raw events
(at rest), and the size of the store is reported per event. Target: p95 < 150 ms for every
dashboard request while fed, filtered or not; unique visitors within 1 % of the exact count (the
30-day figures count visitors with bitmaps, docs/reports.md).

The generated log is kept between runs (``bench/workdir.py``: ``BENCH_DIR``, or for a million
events or more a directory under ``~/.cache/sightline-bench``); delete its ``store.duckdb`` to time
the store's build again, or the directory to start over. Each run feeds a copy (the fed events
go with it), and data generated over 12 hours ago is generated again (``bench/workdir.py``).
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import func, select

from bench.bench_export import free_port, start_server
from bench.feeder import Feeder
from bench.reports_data import insert as insert_events
from bench.store_data import settle
from bench.workdir import measured_on_copy, remove, stale
from sightline.accounts.users import create_user
from sightline.database import open_database
from sightline.database.schema import events
from sightline.sites import service as sites_service
from sightline.store.engine import FILE_NAME
from sightline.store.engines import Embedded
from sightline.store.feed import Feeder as StoreFeeder

TARGET_MS = 150.0
MAX_ERROR = 0.01  # unique visitors exact, or within 1 % when approximate (docs/reports.md)
EMAIL = "bench@example.com"
PASSWORD = "a long benchmark password"
ZONE = "America/New_York"
DIMENSIONS = [
    "pages",
    "entry_pages",
    "exit_pages",
    "sources",
    "utm_campaigns",
    "browsers",
    "operating_systems",
    "devices",
    "events",
]


def prepare(data_dir: Path, count: int) -> int:
    """The log with its owner, site and events; returns the site id (kept with ``BENCH_DIR``:
    marker file ``events-N``; delete ``store.duckdb`` to time a full build of the store again)."""
    url = f"sqlite:///{data_dir / 'sightline.db'}"
    marker = data_dir / f"events-{count}"
    if stale(marker):
        remove(data_dir)
        data_dir.mkdir(parents=True)
    if marker.exists():
        return int(marker.read_text())
    db = open_database(url)
    try:
        with db.begin() as conn:
            owner_id = int(create_user(conn, EMAIL, PASSWORD)["id"])
            site = sites_service.create_site(conn, owner_id, "Bench", "bench.example.com")
            sites_service.update_site(conn, owner_id, int(site["id"]), {"timezone": ZONE})
        site_id = int(site["id"])
    finally:
        db.dispose()
    seconds = insert_events(str(data_dir / "sightline.db"), site_id, count, 60, datetime.now(UTC))
    print(f"generated {count:,} events in {seconds:.0f} s ({count / seconds:,.0f} events/s)", flush=True)
    marker.write_text(str(site_id))
    return site_id


FILTERS: list[dict[str, str]] = [
    {"source": "google.com"},
    {"page": "/pricing"},
    {"event": "signup"},
    {"page": "/pricing", "source": "google.com"},
]


def requests_of(
    site_id: int, range_name: str, filters: dict[str, str] | None = None
) -> list[tuple[str, str, dict[str, str]]]:
    base = f"/api/sites/{site_id}/reports"
    common = {"range": range_name, **(filters or {})}
    out = [
        ("summary", f"{base}/summary", {**common, "compare": "true"}),
        ("timeseries", f"{base}/timeseries", {**common, "compare": "true"}),
    ]
    out += [(f"breakdown {d}", f"{base}/breakdown", {**common, "dimension": d}) for d in DIMENSIONS]
    out.append(("breakdown props", f"{base}/breakdown", {**common, "dimension": "props", "name": "signup"}))
    if not filters:
        out.append(("realtime", f"{base}/realtime", {}))
    return out


def time_requests(
    client: httpx.Client,
    requests: list[tuple[str, str, dict[str, str]]],
    repeat: int,
    first: dict[str, float] | None = None,
) -> dict[str, list[float]]:
    """Milliseconds per request over ``repeat`` rounds after a first one, whose times go to ``first``
    (it warms caches: the store's pages, the selections and spans reports keep while the store is
    unchanged, docs/reports.md)."""
    timings: dict[str, list[float]] = {name: [] for name, _, _ in requests}
    for round_number in range(repeat + 1):
        for name, path, params in requests:
            started = time.perf_counter()
            response = client.get(path, params=params)
            elapsed = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, response.text
            if round_number:
                timings[name].append(elapsed)
            elif first is not None:
                first[name] = elapsed
    return timings


def wait_for_store(client: httpx.Client, timeout: float = 3600) -> float:
    """Until the store holds the whole log; returns the seconds it took (the server builds it)."""
    started = time.monotonic()
    last = 0.0
    while time.monotonic() - started < timeout:
        figures = client.get("/api/health").json()["services"]["store"]
        if figures["status"] != "down" and figures["lag_events"] == 0:
            return time.monotonic() - started
        if time.monotonic() - last > 30:
            print(f"store: {figures.get('fed_events')} fed, {figures['lag_events']} to go", flush=True)
            last = time.monotonic()
        time.sleep(0.5)
    raise RuntimeError("the analytics store did not catch up")


def dashboard(
    client: httpx.Client,
    site_id: int,
    ranges: tuple[str, ...],
    filters: list[dict[str, str]],
    repeat: int,
    target_ms: float,
) -> int:
    """Times every dashboard request for each range, then under each filter (7 and 30 days);
    prints p50/p95 per request (and the first round's time, before anything was kept) and returns
    how many missed ``target_ms`` at p95."""
    print(f"{'request':<34} {'range':>6} {'p50 ms':>8} {'p95 ms':>8} {'first ms':>9}")
    runs: list[tuple[str, dict[str, str] | None]] = [(r, None) for r in ranges]
    runs += [(r, f) for f in filters for r in ("7d", "30d")]
    failures = 0
    for range_name, chosen in runs:
        if chosen:
            print("filter " + " & ".join(f"{k}={v}" for k, v in chosen.items()) + ":")
        first: dict[str, float] = {}
        timings = time_requests(client, requests_of(site_id, range_name, chosen), repeat, first)
        for name, values in timings.items():
            slow = p95(values) >= target_ms
            failures += slow
            flag = "  TOO SLOW" if slow else ""
            median = statistics.median(values)
            print(
                f"{name:<34} {range_name:>6} {median:8.1f} {p95(values):8.1f} {first[name]:9.1f}{flag}",
                flush=True,
            )
    return failures


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18] if len(values) > 1 else values[0]


def exact_visitors(
    data_dir: Path, site_id: int, start: datetime, end: datetime, path: str | None = None
) -> int:
    db = open_database(f"sqlite:///{data_dir / 'sightline.db'}", migrate=False)
    try:
        query = select(func.count(func.distinct(events.c.visitor_id))).where(
            events.c.site_id == site_id, events.c.time >= start, events.c.time < end
        )
        if path is not None:
            query = query.where(events.c.name == "pageview", events.c.path == path)
        with db.read() as conn:
            return int(conn.execute(query).scalar_one())
    finally:
        db.dispose()


def accuracy(client: httpx.Client, data_dir: Path, site_id: int) -> list[tuple[str, int, int]]:
    out = []
    for range_name in ("today", "7d", "30d"):
        body = client.get(f"/api/sites/{site_id}/reports/summary", params={"range": range_name}).json()
        start, end = (datetime.fromisoformat(body["range"][k]) for k in ("start", "end"))
        out.append(
            (
                f"visitors {range_name}",
                body["current"]["visitors"],
                exact_visitors(data_dir, site_id, start, end),
            )
        )
    pages = client.get(
        f"/api/sites/{site_id}/reports/breakdown", params={"range": "30d", "dimension": "pages", "limit": "3"}
    ).json()
    start, end = (datetime.fromisoformat(pages["range"][k]) for k in ("start", "end"))
    for row in pages["rows"]:
        exact = exact_visitors(data_dir, site_id, start, end, row["value"])
        out.append((f"visitors 30d page {row['value']}", row["visitors"], exact))
    return out


def fed(
    client: httpx.Client,
    site: dict[str, str],
    ranges: tuple[str, ...],
    filters: list[dict[str, str]],
    repeat: int,
    target_ms: float,
) -> int:
    """The headline: every dashboard request while a separate process feeds ``site`` (its ``id``,
    ``key`` and ``domain``) ``BENCH_FEED_RATE`` events a second; returns how many missed the target
    (and 1 more when the server did not take that rate)."""
    rate = int(os.environ.get("BENCH_FEED_RATE", "2000"))
    feeder = Feeder(str(client.base_url).rstrip("/"), site["key"], f"https://{site['domain']}", rate)
    feeder.start()
    time.sleep(5)  # the feed settles into its steady steps
    print(f"-- while fed {rate:,} events/s (the headline; 'first ms': each request's first since the start)")
    try:
        failures = dashboard(client, int(site["id"]), ranges, filters, repeat, target_ms)
    finally:
        got = feeder.stop()
    print(
        f"fed {got.rate:,.0f} events/s acknowledged over {got.seconds:.0f} s "
        f"({got.accepted:,} batches of 20; {got.failed} failed)",
        flush=True,
    )
    if got.failed or got.rate < 0.9 * rate:
        print(f"the server did not take {rate:,} events/s: the figures above are not at that rate")
        failures += 1
    return failures


def site_of(client: httpx.Client, site_id: int) -> dict[str, str]:
    site = next(s for s in client.get("/api/sites").json()["sites"] if int(s["id"]) == site_id)
    return {"id": str(site_id), "key": str(site["key"]), "domain": str(site["domain"])}


def main() -> int:
    count = int(os.environ.get("BENCH_EVENTS", "10000000"))
    repeat = int(os.environ.get("BENCH_REPEAT", "20"))
    fed_repeat = int(os.environ.get("BENCH_FED_REPEAT", "10"))

    def prepared(data_dir: Path) -> int:
        site_id = prepare(data_dir, count)
        build_store(data_dir, count)
        settle(data_dir)  # the steady state: settled spans in site order
        keep_overview_days(data_dir)  # ... and the overview's days kept, as a restart finds them
        return site_id

    failures = measured_on_copy(
        f"reports-{count}",
        count >= 1_000_000,
        prepared,
        lambda run_dir, site_id: measure(run_dir, site_id, repeat, fed_repeat),
    )
    print(
        "target: p95 < 150 ms for every dashboard request while fed, visitors within 1 %: "
        + ("ok" if not failures else "MISSED")
    )
    return 1 if failures else 0


def build_store(data_dir: Path, count: int) -> None:
    """The store of the kept log, built by the store's feed as the store process builds it (timed:
    an upgrade from a large log takes this long), once."""
    if (data_dir / FILE_NAME).exists():
        return
    db = open_database(f"sqlite:///{data_dir / 'sightline.db'}")
    engine = Embedded(data_dir, 4096)
    try:
        started = time.perf_counter()
        fed = StoreFeeder(db, engine).catch_up()
        seconds = time.perf_counter() - started
    finally:
        engine.close()
        db.dispose()
    size = sum(p.stat().st_size for p in data_dir.glob("store.duckdb*"))
    print(
        f"store built from the log in {seconds:.0f} s ({fed / seconds:,.0f} events/s); "
        f"{size / 2**20:,.0f} MiB, {size / count:.1f} bytes per event",
        flush=True,
    )


def keep_overview_days(data_dir: Path) -> None:
    """Starts the server once on the kept data and asks every site's overview of 7 and 30 days,
    so that the days a server reads at its start (``reports/warm.py``) are kept beside the store
    (``store-kept-days/``) as a server that has run on it leaves them: each run then starts as a
    restarted server does. Without this every run began with the first start after an upgrade,
    reading every site's 30 days from the events (35 s at 100 M events over 50 sites) beside its
    first fed requests. Once kept, a start reads the days ended since (a day a day)."""
    started = time.perf_counter()
    port = free_port()
    process = start_server(data_dir, port, 600)
    try:
        origin = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=3600) as client:
            assert client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).status_code == 200
            wait_for_store(client)
            for name in ("7d", "30d"):
                client.get("/api/overview", params={"range": name}).raise_for_status()
    finally:
        process.terminate()  # the store closes cleanly: its kept days stay valid for the next start
        process.wait(timeout=120)
    print(f"the overview's days kept beside the store ({time.perf_counter() - started:.0f} s)", flush=True)


def measure(data_dir: Path, site_id: int, repeat: int, fed_repeat: int) -> int:
    """The server on ``data_dir``: the dashboard while fed, then at rest, then the visitors'
    accuracy; returns how many figures missed their target."""
    failures = 0
    port = free_port()
    process = start_server(data_dir, port)
    try:
        origin = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=120) as client:
            assert client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).status_code == 200
            seconds = wait_for_store(client)
            print(f"the server's store held the whole log {seconds:.0f} s after it answered", flush=True)
            ranges = ("today", "7d", "30d")
            failures += fed(client, site_of(client, site_id), ranges, FILTERS, fed_repeat, TARGET_MS)
            caught_up = wait_for_store(client)
            print(f"-- at rest (a diagnostic: answered from kept figures), {caught_up:.1f} s after the feed")
            dashboard(client, site_id, ranges, FILTERS, repeat, TARGET_MS)
            print(f"{'figure':<34} {'api':>10} {'exact':>10} {'error':>8}")
            for name, got, exact in accuracy(client, data_dir, site_id):
                error = abs(got - exact) / exact if exact else 0.0
                failures += error > MAX_ERROR
                print(f"{name:<34} {got:>10,} {exact:>10,} {error:8.2%}")
    finally:
        process.terminate()
        process.wait(timeout=15)
    return failures


if __name__ == "__main__":
    raise SystemExit(main())
