"""Engines for the store's tests: DuckDB in the test's directory, and ClickHouse through
clickhouse-connect's HTTP client, against the server ``SIGHTLINE_TEST_CLICKHOUSE_URL`` names or the
stand-in that enforces a server's default limits (the root conftest's ``clickhouse``; a database
per test)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sightline.store.engines import ClickHouse, Embedded, Engine

ENGINES = ["duckdb", "clickhouse"]


def opened_engine(request: pytest.FixtureRequest, kind: str, directory: Path) -> Iterator[Engine]:
    """The body of an engine fixture: a new store of ``kind`` (DuckDB in ``directory``, or a new
    chDB database), closed after its tests."""
    opened: Engine
    if kind == "duckdb":
        opened = Embedded(directory / "data", 256)
    else:
        server = request.getfixturevalue("clickhouse")
        opened = ClickHouse(server.url(f"t_{uuid.uuid4().hex[:12]}"))
    yield opened
    opened.close()


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    yield from opened_engine(request, request.param, tmp_path)


@pytest.fixture(scope="module", params=ENGINES)
def module_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """An engine of each kind for a whole module whose tests only read what it was fed."""
    yield from opened_engine(request, request.param, tmp_path_factory.mktemp(f"store-{request.param}"))
