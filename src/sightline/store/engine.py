"""What the store's two engines share (``store.engines`` opens one): the interface the feeder, the
checks and the reports' reads use, the embedded store's file and tables, the names of the store's
state, and the visit counts a fed batch writes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from sightline.store.changes import Changes, Spans
from sightline.store.dialects import Dialect

log = logging.getLogger("sightline.store")

FILE_NAME = "store.duckdb"
# Every table of the embedded store.
TABLES = ("store_meta", "store_state", "events", "visits", "visit_counts")
WATERMARK = "watermark"
ORDERED = "ordered_until"  # store.ordering: rows before this time are in site order


class StoreBusyError(RuntimeError):
    """Another process holds the embedded store's file."""


class Engine(Protocol):
    dialect: Dialect
    name: str

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]: ...

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]:
        """The rows of ``sql`` as one NumPy array per column (millions of values: no tuples); no rows:
        empty arrays, or no columns at all."""
        ...

    def watermark(self) -> int: ...

    def pending_range(self) -> tuple[int, int] | None: ...

    changes: Changes  # what each write changed (``store.changes``)

    def write(self, after: int, last: int, events: pa.Table, visits: pa.Table, changed: Spans) -> None: ...

    def refill(
        self, site_id: int, drop: list[int], events: pa.Table, visits: pa.Table, changed: Spans
    ) -> None: ...

    def visits_of(self, keys: pa.Array, born_after: int) -> pa.Table: ...

    def execute(self, sql: str, params: dict[str, Any] | None = None, changed: Spans | None = None) -> None:
        """A statement; ``changed``: the sites and spans it changes (None: every site, all of it)."""
        ...

    def reset(self) -> None: ...

    def close(self) -> None: ...


def visit_counts(visits: pa.Table) -> pa.Table:
    """The greatest visit number of each site in a batch's visit rows."""
    counts = visits.group_by("site_id").aggregate([("visit", "max")])
    return pa.table({"site_id": counts["site_id"], "visits": counts["visit_max"]})


def path_literal(path: Path) -> str:
    """A path inside a SQL string literal."""
    return str(path).replace("'", "''")
