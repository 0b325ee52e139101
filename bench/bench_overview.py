"""Every site at a glance (``GET /api/overview``) over 200 sites, as the console asks it.

The store is generated directly (``bench/store_data.py``: ``BENCH_OVERVIEW_EVENTS`` events,
default 10,000,000, over the last 30 days across ``BENCH_OVERVIEW_SITES`` sites, default 200, the
first with a fifth of them; the log only holds the owner and the sites), then ``sightline serve``
runs on it as users run it (on ``BENCH_PORT``, else a free port), and the overview of every site
is asked for today, 7 days and 30 days:

- **at the start**: 30 days, asked as soon as the server answers. A server on a store of a million
  events or more reads every site's 7 and 30 days at its start (``reports/warm.py``); a request
  arriving meanwhile waits for that read, so this is the longest an owner opening the console
  right after a start waits (the store's start included);
- **while fed (the headline)**: a separate process sends the largest site ``BENCH_FEED_RATE``
  events a second (default 2,000, ``bench/feeder.py``), so every feed step drops the kept figures
  of the hours it touched; the first request of each range in this phase (once the store holds
  the whole log: after the start's read, the days it read are kept), then the median and slowest of
  ``BENCH_FED_REPEAT`` more (default 10), and what the store fed meanwhile and had left at the
  end (health's ``store``: a store more than ``BEHIND_SECONDS`` of the feed behind fails the run);
- **at rest (a diagnostic)**, once the store caught up: the same requests ``BENCH_REPEAT`` times
  (default 5). No owner meets these figures while the sites receive traffic.

Each line gives the CPU the server and the store process spent on the first request and, per
request, on the next ones (a figure the machine's load stretches far less than wall time; while
fed it includes the feed's own work of those seconds).

Target: 30 days under 1 s for the first request while fed and under 200 ms for the next ones.
The generated store is kept between runs (``bench/workdir.py``: ``BENCH_DIR``, or for a million
events or more a directory under ``~/.cache/sightline-bench``); each run adds the events it fed.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

import httpx

from bench.bench_export import free_port, start_server
from bench.bench_reports import EMAIL, PASSWORD, site_of, wait_for_store
from bench.bench_scale import prepare
from bench.feeder import Feeder
from bench.proctree import Tree, resident, spent
from bench.store_data import settle
from bench.workdir import remove, size_of, work_dir

FIRST_MS, NEXT_MS = 1000.0, 200.0  # 30 days: the first request, and the next ones while fed
RANGES = ("today", "7d", "30d")
BEHIND_SECONDS = 10  # the store may be this far behind the feed at its end


def _ask(client: httpx.Client, name: str) -> tuple[float, int, int]:
    """Milliseconds of one overview request, its sites and their visitors in all."""
    started = time.perf_counter()
    response = client.get("/api/overview", params={"range": name})
    ms = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    sites = response.json()["sites"]
    return ms, len(sites), sum(int(site["visitors"]) for site in sites)


def _time(client: httpx.Client, repeat: int, headline: bool, tree: Tree) -> int:
    """Each range's first request and the median and slowest of ``repeat`` more, with the CPU the
    server and the store process spent meanwhile (while fed, the feed's work included); returns
    how many missed the target (30 days while fed only)."""
    missed = 0
    for name in RANGES:
        start = tree.cpu()
        first, count, visitors = _ask(client, name)
        before = tree.cpu()
        times = [_ask(client, name)[0] for _ in range(repeat)]
        used, at_first = spent(before, tree.cpu()), spent(start, before)
        cpu = (
            f"; CPU first {1000 * (at_first['server'] + at_first['store']):.0f} ms, "
            f"next {1000 * (used['server'] + used['store']) / repeat:.0f} ms per request"
        )
        p50, worst = statistics.median(times), max(times)
        print(
            f"overview {name:>6}: {count} sites, {visitors:,} visitors; "
            f"first {first:.0f} ms, p50 {p50:.0f} ms, max {worst:.0f} ms{cpu}",
            flush=True,
        )
        if headline and name == "30d" and (first > FIRST_MS or p50 > NEXT_MS):
            missed += 1
    return missed


def _store(client: httpx.Client) -> dict[str, Any]:
    store: dict[str, Any] = client.get("/api/health").json()["services"]["store"]
    return store


def _fed(client: httpx.Client, before: int, rate: int) -> int:
    """Says what the store fed of the fed phase's events and what waits; 1 when more than
    ``BEHIND_SECONDS`` of them wait (the fed figures would not include the feed's changes)."""
    store = _store(client)
    waiting = int(store["lag_events"])
    unrepaired = (store.get("check") or {}).get("unrepaired") or "nothing unrepaired"
    print(
        f"store: fed {int(store.get('fed_events') or 0) - before:,} events meanwhile, {waiting:,} "
        f"waiting at the end; self-check: {unrepaired}",
        flush=True,
    )
    if waiting > BEHIND_SECONDS * rate:
        print("the store did not keep up with the feed: the figures above do not include its changes")
        return 1
    return 0


def main() -> int:
    count = int(os.environ.get("BENCH_OVERVIEW_EVENTS", "10000000"))
    site_count = int(os.environ.get("BENCH_OVERVIEW_SITES", "200"))
    repeat = int(os.environ.get("BENCH_REPEAT", "5"))
    fed_repeat = int(os.environ.get("BENCH_FED_REPEAT", "10"))
    rate = int(os.environ.get("BENCH_FEED_RATE", "2000"))
    work, keep = work_dir(f"overview-{count}-{site_count}", count >= 1_000_000)
    data_dir = work / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    failures = 0
    process = None
    try:
        site_id = prepare(data_dir, count, site_count)
        settle(data_dir)  # the steady state: settled spans in site order
        port = int(os.environ.get("BENCH_PORT") or free_port())
        kept_mb = os.environ.get("BENCH_KEPT_MB")  # the server's --reports-kept-mb, else its default
        process = start_server(data_dir, port, 120, ["--reports-kept-mb", kept_mb] if kept_mb else [])
        print(f"the server keeps up to {kept_mb or 'the default'} MiB of figures between requests")
        origin = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=600) as client:
            assert client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).status_code == 200
            cold, count, _ = _ask(client, "30d")  # as soon as the server answers: during its start's read
            print(f"overview    30d: {count} sites, asked as soon as the server answered: {cold:.0f} ms")
            ready = wait_for_store(client)  # started, and fed what an earlier run left: not this run's feed
            print(f"the store held the whole log {ready:.0f} s after the server answered", flush=True)
            site = site_of(client, site_id)
            fed_before = int(_store(client).get("fed_events") or 0)
            feeder = Feeder(origin, site["key"], f"https://{site['domain']}", rate)
            feeder.start()
            time.sleep(5)  # the feed settles into its steady steps
            load = os.getloadavg()[0]
            print(f"-- while fed {rate:,} events/s (the headline; 'first': the first since the start)")
            try:
                failures += _time(client, fed_repeat, headline=True, tree=Tree(process.pid))
            finally:
                got = feeder.stop()
            print(
                f"fed {got.rate:,.0f} events/s acknowledged over {got.seconds:.0f} s "
                f"({got.failed} batches failed); load average {load:.1f} -> {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            if got.failed or got.rate < 0.9 * rate:
                print(f"the server did not take {rate:,} events/s: the figures above are not at that rate")
                failures += 1
            failures += _fed(client, fed_before, rate)
            memory = resident(Tree(process.pid))
            print(f"resident: the server {memory['server']:,} MiB, the store process {memory['store']:,} MiB")
            caught_up = wait_for_store(client)
            print(f"-- at rest (a diagnostic), {caught_up:.1f} s after the feed")
            _time(client, repeat, headline=False, tree=Tree(process.pid))
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        if keep:
            print(f"kept for the next run: {work} ({size_of(work)}; each run adds the events it fed)")
        else:
            remove(work)
    print(
        f"target: 30 days under {FIRST_MS:.0f} ms first and {NEXT_MS:.0f} ms p50 while fed: "
        + ("ok" if not failures else "MISSED")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
