"""What the server needs to start the store process, without loading the engines: the process's
options and its entry point. DuckDB, Arrow and the feed load in the store process itself, so a
server that starts one imports none of them (about half a second less per start).

The process runs at a lower CPU priority than the server and ingest's writer (``niceness``,
``--store-niceness``):
when the cores are busy with events, a feed step or a report's query (DuckDB runs it on both
cores) waits for them instead of taking their turn, so a request's acknowledgement is not held
back behind the store's work; when the cores are free it gets them all (docs/performance.md).

May import: the standard library only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from multiprocessing.connection import Connection


@dataclass(frozen=True)
class Options:
    database_url: str
    events_url: str | None
    data_dir: str
    memory_mb: int
    interval: float
    batch: int
    address: str
    authkey: bytes
    log_retention_days: int | None
    niceness: int = 0  # added to the process's nice value: 10 gets about a tenth of a busy CPU


def main(options: Options, ready: Connection) -> None:
    """The store process's entry point (``multiprocessing`` spawn target)."""
    if options.niceness:
        os.nice(options.niceness)  # before DuckDB starts its threads, which inherit it
    from sightline.store.process import main as run

    run(options, ready)
