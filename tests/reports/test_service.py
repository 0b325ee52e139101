"""A comparison's two periods are asked of the store at once (each request thread computes the
current period while a thread of its own computes the earlier one), with the same figures."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sightline.reports.params import Query
from sightline.reports.service import Report
from sightline.store.dialects import Dialect
from sightline.store.engines import Embedded

SITE = {"id": 1, "timezone": "Europe/Berlin"}
NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)


class Together:
    """A store whose first query in each thread waits until another thread's first query is in
    flight too: a report that asks its periods one after the other breaks the barrier."""

    def __init__(self, engine: Embedded) -> None:
        self.engine = engine
        self.dialect: Dialect = engine.dialect
        self.barrier = threading.Barrier(2, timeout=5)
        self.threads: set[int] = set()
        self.lock = threading.Lock()

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        with self.lock:
            first = threading.get_ident() not in self.threads
            self.threads.add(threading.get_ident())
        if first:
            self.barrier.wait()
        return self.engine.query(sql, params)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Embedded]:
    opened = Embedded(tmp_path / "data", 256)
    yield opened
    opened.close()


@pytest.mark.parametrize("report", ["summary", "timeseries"])
def test_a_comparisons_earlier_period_is_asked_while_the_current_one_is(
    engine: Embedded, report: str
) -> None:
    together = Report(Together(engine), SITE, Query(range="30d", compare=True), NOW)
    alone = Report(engine, SITE, Query(range="30d", compare=True), NOW)
    body = getattr(together, report)()
    assert body == getattr(alone, report)()
    assert body["previous"] is not None
