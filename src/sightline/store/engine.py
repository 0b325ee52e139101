"""What the store process asks of either engine (``store.engines``: ``Embedded``, ``ClickHouse``).

May import the store's changes and dialects, pyarrow and the standard library.
"""

from __future__ import annotations

from typing import Any, Protocol

import pyarrow as pa

from sightline.store.changes import Changes, Spans
from sightline.store.dialects import Dialect


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
