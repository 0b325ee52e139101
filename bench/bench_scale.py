"""Dashboard latency at 100 million events across 50 sites (the largest with 20 million in 30 days).

The store is generated directly (``bench/store_data.py``; the log only holds the owner and the
sites), then ``sightline serve`` runs on it as users run it, and every request the dashboard
makes for the largest site is timed for 7 and 30 days, unfiltered and under the four filters of
the reports benchmark, as in ``bench_reports``: first **while fed** (the headline: a separate
process sends the largest site ``BENCH_FEED_RATE`` events a second, default 2,000, so its kept
figures are dropped as on a live site; p50/p95 over ``BENCH_FED_REPEAT`` rounds, default 10, and
each request's first time since the server started), then **at rest** (a diagnostic: the same
requests ``BENCH_REPEAT`` times, default 10, answered from kept figures after the first round).
Target: p95 < 400 ms while fed.

``BENCH_SCALE_EVENTS`` (default 100,000,000) and ``BENCH_SCALE_SITES`` (50) change the size. The
generated store is kept between runs (``bench/workdir.py``: ``BENCH_DIR``, or for a million events
or more a directory under ``~/.cache/sightline-bench``); each run feeds a copy of it, and a store
generated over 12 hours ago is generated again.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.bench_export import free_port, start_server
from bench.bench_reports import EMAIL, PASSWORD, dashboard, fed, keep_overview_days, site_of, wait_for_store
from bench.store_data import generate, move_ids, settle
from bench.workdir import measured_on_copy, remove, stale
from sightline.accounts.users import create_user
from sightline.database import open_database
from sightline.sites import service as sites_service
from sightline.store.engines import Embedded
from sightline.store.feed import micros

TARGET_MS = 400.0
FILTERS: list[dict[str, str]] = [
    {"source": "google.com"},
    {"page": "/p/0"},
    {"event": "signup"},
    {"page": "/p/0", "source": "google.com"},
]


def prepare(data_dir: Path, count: int, site_count: int) -> int:
    """The log's owner and sites and the generated store; returns the largest site's id."""
    marker = data_dir / f"scale-{count}-{site_count}"
    if stale(marker):
        remove(data_dir)
        data_dir.mkdir(parents=True)
    if marker.exists():
        move_ids(data_dir, int(marker.stat().st_mtime * 1_000_000))  # a store generated with ids from 0
        return int(marker.read_text())
    db = open_database(f"sqlite:///{data_dir / 'sightline.db'}")
    try:
        with db.begin() as conn:
            owner_id = int(create_user(conn, EMAIL, PASSWORD)["id"])
            sites = [
                int(sites_service.create_site(conn, owner_id, f"Site {n}", f"site{n}.example.com")["id"])
                for n in range(site_count)
            ]
    finally:
        db.dispose()
    store = Embedded(data_dir, 4096)
    try:
        seconds = generate(store._con, count, sites, micros(datetime.now(UTC)))
    finally:
        store.close()
    size = sum(p.stat().st_size for p in data_dir.glob("store.duckdb*"))
    print(
        f"generated {count:,} events for {site_count} sites in {seconds:.0f} s; store "
        f"{size / 2**30:.2f} GiB ({size / count:.1f} bytes per event)",
        flush=True,
    )
    marker.write_text(str(sites[0]))
    return sites[0]


def main() -> int:
    count = int(os.environ.get("BENCH_SCALE_EVENTS", "100000000"))
    site_count = int(os.environ.get("BENCH_SCALE_SITES", "50"))
    repeat = int(os.environ.get("BENCH_REPEAT", "10"))
    fed_repeat = int(os.environ.get("BENCH_FED_REPEAT", "10"))

    def prepared(data_dir: Path) -> int:
        site_id = prepare(data_dir, count, site_count)
        settle(data_dir)  # the steady state: settled spans in site order
        keep_overview_days(data_dir)  # ... and the overview's days kept, as a restart finds them
        return site_id

    failures = measured_on_copy(
        f"scale-{count}-{site_count}",
        count >= 1_000_000,
        prepared,
        lambda run_dir, site_id: measure(run_dir, site_id, repeat, fed_repeat),
    )
    print(
        f"target: p95 < {TARGET_MS:.0f} ms for every dashboard request while fed: "
        + ("ok" if not failures else "MISSED")
    )
    return 1 if failures else 0


def measure(data_dir: Path, site_id: int, repeat: int, fed_repeat: int) -> int:
    """The server on ``data_dir``: the largest site's dashboard while fed, then at rest; returns
    how many requests missed the target while fed."""
    port = free_port()
    kept_mb = os.environ.get("BENCH_KEPT_MB")  # the server's --reports-kept-mb, else its default
    process = start_server(data_dir, port, 120, ["--reports-kept-mb", kept_mb] if kept_mb else [])
    try:
        origin = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=300) as client:
            assert client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).status_code == 200
            while client.get("/api/health").json()["services"]["store"]["status"] == "down":
                time.sleep(0.5)
            ranges = ("7d", "30d")
            failures = fed(client, site_of(client, site_id), ranges, FILTERS, fed_repeat, TARGET_MS)
            caught_up = wait_for_store(client)
            print(f"-- at rest (a diagnostic: answered from kept figures), {caught_up:.1f} s after the feed")
            dashboard(client, site_id, ranges, FILTERS, repeat, TARGET_MS)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return failures


if __name__ == "__main__":
    raise SystemExit(main())
