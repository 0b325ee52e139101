"""Every site at a glance (``GET /api/overview``'s store query) over many sites.

The store is generated directly (``bench/store_data.py``: ``BENCH_OVERVIEW_EVENTS`` events,
default 100,000,000, over the last 30 days across ``BENCH_OVERVIEW_SITES`` sites, default 200, the
first with a fifth of them), then the overview of every site is asked of the embedded store for
each range: the first ask after the store is opened (cold) and the median and slowest of
``BENCH_REPEAT`` more (default 5). ``BENCH_DIR`` keeps the generated store between runs.
Target: under 2 s for 30 days at 100 M events.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.store_data import generate
from sightline.reports.overview import overview
from sightline.store.engines import Embedded
from sightline.store.feed import micros

TARGET_MS = 2000.0
RANGES = ("today", "7d", "30d", "month", "12mo")


def _sites(count: int) -> list[dict[str, object]]:
    created = (datetime.now(UTC) - timedelta(days=40)).isoformat()
    return [
        {
            "id": n,
            "name": f"Site {n}",
            "domain": f"site{n}.example.com",
            "timezone": "UTC",
            "created_at": created,
        }
        for n in range(1, count + 1)
    ]


def main() -> int:
    count = int(os.environ.get("BENCH_OVERVIEW_EVENTS", "100000000"))
    site_count = int(os.environ.get("BENCH_OVERVIEW_SITES", "200"))
    repeat = int(os.environ.get("BENCH_REPEAT", "5"))
    keep = os.environ.get("BENCH_DIR")
    data_dir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="sightline-bench-overview-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    marker = data_dir / f"overview-{count}-{site_count}"
    sites = _sites(site_count)
    if not marker.exists():
        store = Embedded(data_dir, 4096)
        try:
            ids = [int(str(site["id"])) for site in sites]
            seconds = generate(store._con, count, ids, micros(datetime.now(UTC)))
        finally:
            store.close()
        print(f"generated {count:,} events for {site_count} sites in {seconds:.0f} s", flush=True)
        marker.write_text("ok")
    failures = 0
    for name in RANGES:
        store = Embedded(data_dir, 4096)
        try:
            started = time.perf_counter()
            answer = overview(store, sites, name, None, None, datetime.now(UTC))
            cold = (time.perf_counter() - started) * 1000
            times = []
            for _ in range(repeat):
                started = time.perf_counter()
                overview(store, sites, name, None, None, datetime.now(UTC))
                times.append((time.perf_counter() - started) * 1000)
        finally:
            store.close()
        visitors = sum(int(site["visitors"]) for site in answer["sites"])
        p50, worst = statistics.median(times), max(times)
        print(
            f"overview {name:>6}: {len(answer['sites'])} sites, {visitors:,} visitors; "
            f"cold {cold:.0f} ms, p50 {p50:.0f} ms, max {worst:.0f} ms",
            flush=True,
        )
        if name == "30d" and count >= 100_000_000 and p50 > TARGET_MS:
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
