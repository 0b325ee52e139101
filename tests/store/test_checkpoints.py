"""The embedded store's checkpoints: the store process writes the WAL into the file itself, between
two of its writes, instead of DuckDB doing it inside the commit that crosses its threshold (where
the write still held the kept selections, and every filtered report waited for it)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from sightline.store import duckdb_engine
from sightline.store.engines import Embedded
from sightline.store.process import Status, _checkpoint

# 90,000 rows of about 300 bytes: under a row group, so DuckDB logs them in the WAL instead of
# writing them straight into the file, and over the 16 MiB at which DuckDB checkpointed itself.
ROWS = 90_000
FILL = (
    "INSERT INTO events (site_id, time, id, visitor, visit, name, path, props, visit_start) "
    "SELECT 1, i, i, i, i, 'pageview', repeat(md5(i::VARCHAR), 9), [], 0 FROM range($low, $high) AS r(i)"
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Embedded]:
    opened = Embedded(tmp_path / "data", 256)
    yield opened
    opened.close()


def fill(store: Embedded, low: int, high: int) -> None:
    store.execute(FILL, {"low": low, "high": high}, {1: [(0, high)]})


def test_a_commit_past_duckdbs_threshold_leaves_the_wal_to_the_stores_own_checkpoint(store: Embedded) -> None:
    fill(store, 0, ROWS)
    assert store.wal_bytes() >= duckdb_engine.CHECKPOINT_WAL  # the commit did not checkpoint
    took = store.checkpoint()
    assert took is not None
    assert took >= 0
    assert store.wal_bytes() < 2**20
    assert store.query("SELECT count(*), max(id) FROM events", {}) == [(ROWS, ROWS - 1)]


def test_a_checkpoint_waits_until_the_wal_is_large_enough(store: Embedded) -> None:
    fill(store, 0, 1000)
    small = store.wal_bytes()
    assert 0 < small < duckdb_engine.CHECKPOINT_WAL
    assert store.checkpoint() is None
    assert store.wal_bytes() == small
    assert store.checkpoint(at_least=1) is not None
    assert store.wal_bytes() < small


def test_checkpointed_rows_are_in_the_file_after_the_process_is_gone(tmp_path: Path) -> None:
    opened = Embedded(tmp_path / "data", 256)
    fill(opened, 0, ROWS)
    opened.checkpoint()
    wal = opened.path.with_name(opened.path.name + ".wal")
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / opened.path.name).write_bytes(opened.path.read_bytes())  # the file alone, as a kill leaves it
    if wal.exists():
        (copy / wal.name).write_bytes(wal.read_bytes())
    opened.close()
    again = Embedded(copy, 256)
    try:
        assert again.query("SELECT count(*) FROM events", {}) == [(ROWS,)]
    finally:
        again.close()


def test_the_process_step_counts_checkpoints_and_a_failing_one_is_said_once_not_as_a_feed_problem(
    store: Embedded, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    status = Status(store)
    _checkpoint(store, status)
    assert (status.checkpoints, status.last_checkpoint_ms) == (0, None)
    fill(store, 0, ROWS)
    _checkpoint(store, status)
    assert status.checkpoints == 1
    assert status.last_checkpoint_ms is not None

    def refused(at_least: int = 0) -> float | None:
        raise RuntimeError("TransactionContext Error: cannot checkpoint")

    monkeypatch.setattr(store, "checkpoint", refused)
    with caplog.at_level(logging.WARNING, logger="sightline.store"):
        _checkpoint(store, status)
    assert status.checkpoints == 1
    assert status.problem is None
    assert "checkpoint failed" in caplog.text
    assert status.checkpoint_error == "TransactionContext Error: cannot checkpoint"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sightline.store"):
        _checkpoint(store, status)  # failing again: said once
    assert "checkpoint failed" not in caplog.text
    monkeypatch.undo()
    _checkpoint(store, status)
    assert status.checkpoint_error is None
