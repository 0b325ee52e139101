"""What the server needs to start the store process, without loading the engines: the process's
options and its entry point. DuckDB, Arrow and the feed load in the store process itself, so a
server that starts one imports none of them (about half a second less per start).

May import: the standard library only.
"""

from __future__ import annotations

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


def main(options: Options, ready: Connection) -> None:
    """The store process's entry point (``multiprocessing`` spawn target)."""
    from sightline.store.process import main as run

    run(options, ready)
