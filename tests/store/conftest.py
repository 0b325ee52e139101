"""Engines for the store's tests: DuckDB in the test's directory, and ClickHouse's SQL through
embedded chDB (one chDB data path per test process, as chDB allows: ``chdb_path`` of the root
conftest; a database per test)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sightline.store.engines import ClickHouse, Embedded, Engine


@pytest.fixture(params=["duckdb", "clickhouse"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    opened: Engine
    if request.param == "duckdb":
        opened = Embedded(tmp_path / "data", 256)
    else:
        path: Path = request.getfixturevalue("chdb_path")
        opened = ClickHouse(f"chdb://{path}", database=f"t_{uuid.uuid4().hex[:12]}")
    yield opened
    if request.param == "duckdb":
        opened.close()
