"""The store's two engines behind one small interface (``store.engine``): read a query's rows,
write one fed batch. ``open_engine`` opens the one ``--events-url`` names: ``Embedded``
(``store.duckdb_engine``), a DuckDB file in the data directory, or ``ClickHouse``
(``store.clickhouse_engine``). Their shared names are here too, for the modules that use them.
"""

from __future__ import annotations

from pathlib import Path

from sightline.store.clickhouse_engine import ClickHouse
from sightline.store.duckdb_engine import Embedded, copy_tables
from sightline.store.engine import (
    FILE_NAME,
    ORDERED,
    TABLES,
    WATERMARK,
    Engine,
    StoreBusyError,
    path_literal,
    visit_counts,
)

__all__ = [
    "FILE_NAME",
    "ORDERED",
    "TABLES",
    "WATERMARK",
    "ClickHouse",
    "Embedded",
    "Engine",
    "StoreBusyError",
    "copy_tables",
    "open_engine",
    "path_literal",
    "visit_counts",
]


def open_engine(events_url: str | None, directory: Path, memory_mb: int) -> Engine:
    """The engine ``--events-url`` names: DuckDB in the data directory when it is empty."""
    if not events_url:
        return Embedded(directory, memory_mb)
    return ClickHouse(events_url)
