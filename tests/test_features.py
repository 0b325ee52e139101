"""How the server takes a feature's jobs: started in the list's order (those marked first before
the others), ready once all have started, stopped in reverse, and the started ones stopped when a
later one fails to start."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from sightline.features import Feature, Job, Jobs
from sightline.jobs import Periodic


def recorded(
    name: str, log: list[str], fail: bool = False
) -> Callable[[], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        if fail:
            raise RuntimeError(f"{name} cannot start")
        log.append(f"start {name}")
        try:
            yield
        finally:
            log.append(f"stop {name}")

    return running


def test_jobs_start_in_the_lists_order_are_ready_after_all_started_and_stop_in_reverse() -> None:
    log: list[str] = []

    async def ready() -> None:
        log.append("ready a")

    jobs = Jobs(
        [
            Feature("one", jobs=[Job("a", recorded("a", log), ready=ready)]),
            Feature("two", jobs=[Job("b", recorded("b", log)), Job("c", recorded("c", log))]),
        ]
    )

    async def run() -> None:
        async with jobs.running():
            assert jobs.now == ["a", "b", "c"]
            log.append("serving")
        assert jobs.now == []

    asyncio.run(run())
    assert log == ["start a", "start b", "start c", "ready a", "serving", "stop c", "stop b", "stop a"]


def test_jobs_marked_first_start_before_the_others_and_stop_after_them() -> None:
    log: list[str] = []
    jobs = Jobs(
        [
            Feature("one", jobs=[Job("a", recorded("a", log))]),
            Feature("two", jobs=[Job("b", recorded("b", log)), Job("c", recorded("c", log), first=True)]),
        ]
    )

    async def run() -> None:
        async with jobs.running():
            assert jobs.now == ["c", "a", "b"]

    asyncio.run(run())
    assert log == ["start c", "start a", "start b", "stop b", "stop a", "stop c"]


def test_a_job_that_fails_to_start_stops_the_jobs_started_before_it() -> None:
    log: list[str] = []
    jobs = Jobs(
        [Feature("one", jobs=[Job("a", recorded("a", log)), Job("b", recorded("b", log, fail=True))])]
    )

    async def run() -> None:
        async with jobs.running():
            raise AssertionError("the server does not start")

    with pytest.raises(RuntimeError, match="b cannot start"):
        asyncio.run(run())
    assert log == ["start a", "stop a"]
    assert jobs.now == []


def test_a_periodic_job_plugs_in_under_its_own_name_and_runs_at_start() -> None:
    runs: list[int] = []
    periodic = Periodic("the cleanup", lambda: runs.append(1), 3600)
    job = Job.periodic(periodic)
    assert job.name == "the cleanup"

    async def run() -> None:
        async with Jobs([Feature("things", jobs=[job])]).running():
            while not runs:
                await asyncio.sleep(0.01)
        assert periodic.stopping.is_set()

    asyncio.run(run())
    assert runs == [1]
