"""The server's side of the analytics store: a report asked while the store process is still
starting waits for it instead of failing; health never waits."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sightline import settings as registry
from sightline.database import open_database
from sightline.store import client
from sightline.store.client import StoreClient, StoreFullError, StoreUnavailableError, kept_room


def _store(tmp_path: Path) -> StoreClient:
    settings = registry.load({"data_dir": str(tmp_path)}, environ={})
    return StoreClient(settings, open_database(f"sqlite:///{tmp_path / 'sightline.db'}"))


def test_a_report_asked_while_the_store_starts_waits_for_it_and_is_answered(tmp_path: Path) -> None:
    store = _store(tmp_path)
    answers: list[object] = []

    def ask() -> None:
        try:
            answers.append(store.query("SELECT 42", {}))
        except StoreUnavailableError as error:
            answers.append(error)

    asking = threading.Thread(target=ask)
    asking.start()  # before the store process is started, as a request in a server's first second
    time.sleep(0.3)
    try:
        store.start()
        asking.join(30)
        assert answers == [[(42,)]]
    finally:
        store.stop()


def test_the_store_process_is_spawned_as_its_job_is_entered_and_answers_once_ready(tmp_path: Path) -> None:
    """Spawned then, not when the event loop first runs the supervising task: after the jobs
    that follow have spawned theirs (the recordings decoder's, ingest's writer), with which its
    loading would share the cores."""
    store = _store(tmp_path)

    async def run() -> None:
        async with store.running():
            assert store._process is not None  # nothing awaited since the job was entered
            assert store._process.is_alive()
            assert await asyncio.to_thread(store.wait_ready, 60)
            assert await asyncio.to_thread(store.query, "SELECT 42", {}) == [(42,)]

    asyncio.run(run())
    assert store._process is None  # stopped with the job


def test_health_does_not_wait_for_a_starting_store_and_a_failed_start_answers_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    started = time.monotonic()
    report = store.probe()
    assert time.monotonic() - started < client.FIRST_WAIT / 2
    assert report.status == "down"
    assert report.figures["problem"] == "The analytics store is starting."
    assert "Wait a few seconds" in str(report.figures["fix"])
    monkeypatch.setattr(store, "_spawn", lambda: (None, None))
    monkeypatch.setattr(
        store, "_await_ready", lambda *_: store._fail("the store process did not start in time")
    )
    store.start()
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="did not start in time"):
        store.query("SELECT 1", {})
    assert time.monotonic() - started < 1


def test_a_store_slower_to_open_than_the_start_timeout_is_waited_for_and_then_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An older store's in-place upgrade can take minutes: the start is said to be slow, not failed.
    monkeypatch.setattr(client, "START_TIMEOUT", 0.0)
    store = _store(tmp_path)
    try:
        store.start()
        assert store.alive
        assert store.problem is None
        assert store.query("SELECT 42", {}) == [(42,)]
    finally:
        store.stop()


def test_a_query_past_the_stores_memory_answers_503_saying_what_to_do_and_the_store_goes_on(
    tmp_path: Path,
) -> None:
    settings = registry.load({"data_dir": str(tmp_path), "store_memory_mb": "32"}, environ={})
    store = StoreClient(settings, open_database(f"sqlite:///{tmp_path / 'sightline.db'}"))
    try:
        store.start()
        with pytest.raises(StoreFullError) as raised:  # one list of 160 MB: it cannot spill
            store.query("SELECT max(len(l)) FROM (SELECT list(range) AS l FROM range(20000000))", {})
        assert raised.value.status == 503
        assert raised.value.code == "store_full"
        assert "32 MiB, --store-memory-mb" in raised.value.message
        assert "shorter period" in raised.value.message
        with pytest.raises(RuntimeError, match="refused a query"):  # a fault of the query stays one
            store.query("SELECT no_such_column FROM range(3)", {})
        assert store.query("SELECT 42", {}) == [(42,)]
    finally:
        store.stop()


def test_the_kept_figures_room_is_as_set_else_an_eighth_of_the_usable_memory_within_bounds() -> None:
    assert kept_room(5) == 5 << 20
    assert kept_room(None, 2 << 30) == 256 << 20  # a 2 GiB machine or container
    assert kept_room(None, 512 << 20) == 128 << 20  # never under 128 MiB
    assert kept_room(None, 64 << 30) == 1024 << 20  # never over 1,024 MiB
    assert 128 << 20 <= kept_room(None) <= 1024 << 20
    assert 0 < client.usable_memory() <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_the_client_counts_the_requests_under_way_of_every_thread(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        store.start()
        assert store.asking == 0
        slow = threading.Thread(target=store.query, args=("SELECT count(*) FROM range(3000000000)", {}))
        slow.start()
        deadline = time.monotonic() + 10
        while store.asking == 0 and slow.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert store.asking == 1
        slow.join(60)
        assert store.asking == 0
        with pytest.raises(RuntimeError):
            store.query("SELECT no_such_column", {})
        assert store.asking == 0  # a refused query is no longer under way either
    finally:
        store.stop()


def test_days_whose_keys_cannot_be_written_are_not_kept_and_the_request_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    (tmp_path / "store-kept-days").write_text("a file where the keys' directory belongs")
    asked: list[object] = []
    monkeypatch.setattr(store, "ask", asked.append)  # nothing may reach the store process
    keys = np.array([1, 2], dtype=np.uint64)
    assert store.keep_days("epoch", [(1, 0, 0, 86_400_000_000, 3, keys)]) == 0
    assert asked == []
