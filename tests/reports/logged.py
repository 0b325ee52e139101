"""A report query runner on a DuckDB store that keeps each query's SQL, for tests that check how a
report was counted as well as what it counted."""

from __future__ import annotations

from typing import Any

import duckdb

from sightline.reports.queries import Run


def logged_run(con: duckdb.DuckDBPyConnection, seen: list[str]) -> Run:
    def run(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        seen.append(sql)
        return con.cursor().execute(sql, params).fetchall()

    return run
