"""How the overview reads the pieces it does not find kept (``reports.overview_pieces.read``): the
store groups events by a unit of time that never lies across two pieces, and its columns come back
as arrays that keep every 64-bit visitor key exact, on both engines."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from sightline.reports.overview_pieces import UNITS, _unit, unique
from sightline.store.engines import ClickHouse, Embedded

HOUR, QUARTER, MINUTE = UNITS
DAY = 24 * HOUR
MIDNIGHT = 20_000 * DAY  # a UTC midnight, in µs


def test_whole_utc_days_and_their_hours_are_read_by_the_hour() -> None:
    spans = [(MIDNIGHT + i * DAY, MIDNIGHT + (i + 1) * DAY) for i in range(30)]
    spans.append((MIDNIGHT + 30 * DAY, MIDNIGHT + 30 * DAY + HOUR))
    assert _unit(spans) == HOUR


def test_days_of_a_zone_half_an_hour_off_are_read_by_the_quarter_hour() -> None:
    start = MIDNIGHT - 5 * HOUR - 2 * QUARTER  # Asia/Kolkata's midnight
    assert _unit([(start + i * DAY, start + (i + 1) * DAY) for i in range(7)]) == QUARTER


def test_minutes_of_the_realtime_range_are_read_by_the_minute() -> None:
    now = MIDNIGHT + 7 * MINUTE
    assert _unit([(now + i * MINUTE, now + (i + 1) * MINUTE) for i in range(30)]) == MINUTE


def test_a_piece_ending_within_an_hour_another_starts_in_is_read_by_a_shorter_unit() -> None:
    cut = MIDNIGHT + HOUR + 17 * MINUTE + 3  # the comparison's day, cut at the time of day
    assert _unit([(MIDNIGHT, cut), (MIDNIGHT + DAY, MIDNIGHT + 2 * DAY)]) == HOUR  # nothing after the cut
    assert _unit([(MIDNIGHT + HOUR, cut), (cut, MIDNIGHT + 2 * HOUR)]) == 1
    assert _unit([(MIDNIGHT + HOUR, cut), (MIDNIGHT + HOUR + 20 * MINUTE, MIDNIGHT + DAY)]) == MINUTE


def test_keys_are_sorted_and_each_kept_once() -> None:
    keys = np.array([5, 2**64 - 1, 5, 2**63, 0, 2**63], dtype=np.uint64)
    assert unique(keys).tolist() == [0, 5, 2**63, 2**64 - 1]


@pytest.fixture(params=["duckdb", "clickhouse"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Embedded | ClickHouse:
    if request.param == "duckdb":
        return Embedded(tmp_path / "data", 256)
    return ClickHouse(request.getfixturevalue("clickhouse").url(f"t_{uuid.uuid4().hex[:12]}"))


def test_columns_keep_64_bit_keys_above_and_below_2_to_the_63_exact(engine: Embedded | ClickHouse) -> None:
    cast = "CAST({} AS UBIGINT)" if isinstance(engine, Embedded) else "toUInt64('{}')"
    values = [2**64 - 1, 5, 2**63, 2**63 - 1]
    sql = " UNION ALL ".join(f"SELECT {i} AS i, {cast.format(v)} AS visitor" for i, v in enumerate(values))
    got = engine.columns(f"SELECT i, visitor FROM ({sql}) AS t ORDER BY i", {})
    assert got["visitor"].astype(np.uint64).tolist() == values
    empty = engine.columns(f"SELECT i, visitor FROM ({sql}) AS t WHERE i > 9", {})
    assert not len(empty.get("visitor", ()))  # no rows: empty columns, or none (ClickHouse)
    engine.close()
