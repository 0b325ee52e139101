"""The durable log on PostgreSQL with several nodes' writers contending for its commit lock.

Every node's ingest writer commits its groups of batches under one transaction-level advisory lock
(``ingest.log_writer.COMMIT_ORDER``: ids reach the log in order, the store feeds by id). This starts a
PostgreSQL server (``tests/support/postgres.py``) and runs 1, 2 and 4 writer processes at once,
each committing with ingest's own ``LogWriter.commit`` groups of ``BENCH_LOG_GROUP`` batches (default
10) of 20 events for ``BENCH_LOG_SECONDS`` (default 20) seconds; then the same without the lock,
to show what it costs. Reported: events/s and commits/s over all writers, and each commit's p50 and
p95 time. On a shared machine the figures are a lower bound: say so beside them.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import time
import uuid
from datetime import UTC, datetime
from typing import Any

SECONDS = float(os.environ.get("BENCH_LOG_SECONDS", "20"))
GROUP = int(os.environ.get("BENCH_LOG_GROUP", "10"))
EVENTS_PER_BATCH = 20


def _writer(url: str, site_id: int, locked: bool, start: float, out: Any) -> None:
    from sightline.database import open_database
    from sightline.database.tables.events import EVENT_COLUMNS
    from sightline.ingest.log_writer import LogWriter, Rows
    from sightline.sites.traffic import TrafficMarker

    db = open_database(url, migrate=False)
    store = LogWriter(db, TrafficMarker())
    if not locked:
        store._ordered = None  # the comparison: no commit-order lock
    now = datetime.now(UTC)
    row = {
        "site_id": site_id,
        "time": now,
        "visitor_id": "v",
        "session_id": "s",
        "name": "pageview",
        "path": "/",
        "batch_id": "b",
    }
    values = [row.get(column) for column in EVENT_COLUMNS] * EVENTS_PER_BATCH
    while time.time() < start:
        time.sleep(0.01)
    times: list[float] = []
    events = 0
    while time.time() < start + SECONDS:
        group = [Rows(site_id, uuid.uuid4().hex, EVENTS_PER_BATCH, values) for _ in range(GROUP)]
        began = time.perf_counter()
        store.commit(group)
        times.append(time.perf_counter() - began)
        events += GROUP * EVENTS_PER_BATCH
    store.release()
    db.dispose()
    out.put((events, times))


def run(url: str, site_id: int, writers: int, locked: bool) -> str:
    queue: Any = multiprocessing.get_context("spawn").Queue()
    start = time.time() + 3
    processes = [
        multiprocessing.get_context("spawn").Process(
            target=_writer, args=(url, site_id, locked, start, queue)
        )
        for _ in range(writers)
    ]
    for process in processes:
        process.start()
    results = [queue.get(timeout=SECONDS + 120) for _ in processes]
    for process in processes:
        process.join()
    events = sum(r[0] for r in results)
    times = sorted(t for r in results for t in r[1])
    lock = "with" if locked else "without"
    if not times:
        return f"{writers} writer(s), {lock} the lock: no commit in {SECONDS:.0f} s"
    p95 = times[int(len(times) * 0.95)]
    return (
        f"{writers} writer(s), {'with' if locked else 'without'} the lock: {events / SECONDS:,.0f} events/s, "
        f"{len(times) / SECONDS:,.0f} commits/s, commit p50 {statistics.median(times) * 1000:.1f} ms, "
        f"p95 {p95 * 1000:.1f} ms"
    )


def main() -> None:
    from tests.support.postgres import PostgresServer

    from sightline.accounts.users import create_user
    from sightline.database import open_database
    from sightline.sites.service import create_site

    server = PostgresServer()
    server.start()
    try:
        url = server.create_database()
        db = open_database(url)
        with db.begin() as conn:
            owner = create_user(conn, "bench@example.com", "correct horse battery staple")
            site_id = int(create_site(conn, owner["id"], "Bench", "bench.example")["id"])
        db.dispose()
        print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for locked in (True, False):
            for writers in (1, 2, 4):
                print(run(url, site_id, writers, locked), flush=True)
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
