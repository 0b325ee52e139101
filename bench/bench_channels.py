"""What a channel costs a report: the channels table and the channel filter against their source
counterparts, and against the channel worked out by each query from the source and UTM tags
(the reading the store's ``channel`` column replaced), A/B alternated in one process.

The store is generated (``BENCH_CHANNELS_EVENTS``, default 2 M events over 30 days, 4/5 of them
one site's; ``BENCH_DIR`` keeps it between runs), or a copy of a built one
(``BENCH_CHANNELS_STORE``: a data directory holding ``store.duckdb``, e.g. the reports
benchmark's 10 M-event store; it is copied, never written). A copy of the previous layout is
upgraded in place as the store process does when it opens it, and the upgrade's time is printed.

Each request is a report run in-process (``reports.service.Report``) on the store's DuckDB file
with the store process's settings, without the selections the store keeps between requests (so
a filter's figures are what its first request costs). Measured per request: the process's CPU
time (every DuckDB thread's) and the wall time; p50/p95 over ``BENCH_REPEAT`` rounds (default
20), the three readings of each pair in turn within a round, so that the machine's other load
falls on all alike.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.bench_reports import p95
from bench.bench_scale import prepare
from bench.workdir import work_dir
from sightline import channels
from sightline.reports import filters, params, queries
from sightline.reports.service import Report
from sightline.store.dialects import DUCKDB
from sightline.store.engines import FILE_NAME, Embedded

PAIRS: list[tuple[str, dict[str, str], dict[str, str]]] = [
    ("table", {"dimension": "sources"}, {"dimension": "channels"}),
    ("summary filtered", {"source": "google.com"}, {"channel": "organic_search"}),
    ("summary filtered, is not", {"source": "!(none)"}, {"channel": "!direct"}),
    (
        "pages table filtered",
        {"dimension": "pages", "source": "google.com"},
        {"dimension": "pages", "channel": "organic_search"},
    ),
]
ALLOWED = ("range", "dimension", "source", "channel")


class _Reader:
    """The store as reports read it, without kept selections."""

    dialect = DUCKDB

    def __init__(self, store: Embedded) -> None:
        self.store = store

    def query(self, sql: str, values: dict[str, Any]) -> list[tuple[Any, ...]]:
        return self.store.query(sql, values)


@contextmanager
def _worked_out() -> Iterator[None]:
    """Reports read the channel as the rules' expression over each row, not the column."""
    saved = queries.VISIT_COLUMNS["channel"], filters.VISIT_FILTERS["channel"]
    queries.VISIT_COLUMNS["channel"] = filters.VISIT_FILTERS["channel"] = channels.SQL
    try:
        yield
    finally:
        queries.VISIT_COLUMNS["channel"], filters.VISIT_FILTERS["channel"] = saved


def _request(reader: _Reader, site_id: int, given: dict[str, str]) -> Callable[[], tuple[float, float]]:
    site = {"id": site_id, "timezone": "UTC", "created_at": datetime(2020, 1, 1, tzinfo=UTC)}
    allowed = [name for name in ALLOWED if name != "dimension" or "dimension" in given]
    query = params.parse([("range", "30d"), *given.items()], allowed)

    def run() -> tuple[float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        report = Report(reader, site, query, datetime.now(UTC))
        report.breakdown() if query.dimension else report.summary()
        return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000

    return run


def _store_dir(work: Path) -> tuple[Path, int]:
    """The data directory to read and the larger site's id."""
    given = os.environ.get("BENCH_CHANNELS_STORE")
    if not given:
        count = int(os.environ.get("BENCH_CHANNELS_EVENTS", "2000000"))
        return work, prepare(work, count, 2) + 1  # the second site holds 4/5 of the events
    copy = work / "copy"
    copy.mkdir(parents=True, exist_ok=True)
    for name in (FILE_NAME, FILE_NAME + ".wal"):
        if (Path(given) / name).exists():
            shutil.copyfile(Path(given) / name, copy / name)
    return copy, 0


def main() -> int:
    repeat = int(os.environ.get("BENCH_REPEAT", "20"))
    work, keep = work_dir("channels", True)
    data_dir, site_id = _store_dir(work)
    opened, cpu_opened = time.perf_counter(), time.process_time()
    store = Embedded(data_dir, int(os.environ.get("BENCH_STORE_MEMORY_MB", "2048")))
    print(
        f"store opened in {time.perf_counter() - opened:.1f} s, {time.process_time() - cpu_opened:.1f} s "
        "of CPU (an upgrade, when one was due)",
        flush=True,
    )
    try:
        if not site_id:
            site_id = int(
                store.query("SELECT site_id FROM events GROUP BY 1 ORDER BY count(*) DESC", {})[0][0]
            )
        reader = _Reader(store)
        print(
            f"{'request (30 days), ms':<28} {'source CPU p50':>14} {'p95':>6} {'channel column':>15} "
            f"{'p95':>6} {'worked out':>11} {'p95':>6}  wall p50: source, column, worked out"
        )
        for name, by_source, by_channel in PAIRS:
            cpu: dict[str, list[float]] = {"source": [], "column": [], "worked": []}
            wall: dict[str, list[float]] = {"source": [], "column": [], "worked": []}
            for _ in range(repeat):
                for kind, given in (("source", by_source), ("column", by_channel), ("worked", by_channel)):
                    if kind == "worked":
                        with _worked_out():
                            used, took = _request(reader, site_id, given)()
                    else:
                        used, took = _request(reader, site_id, given)()
                    cpu[kind].append(used)
                    wall[kind].append(took)
            print(
                f"{name:<28} "
                + " ".join(f"{statistics.median(cpu[k]):>14.1f} {p95(cpu[k]):6.1f}" for k in cpu)
                + "  "
                + ", ".join(f"{statistics.median(wall[k]):.1f}" for k in wall),
                flush=True,
            )
    finally:
        store.close()
        if os.environ.get("BENCH_CHANNELS_STORE"):
            shutil.rmtree(work / "copy", ignore_errors=True)
        elif not keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
