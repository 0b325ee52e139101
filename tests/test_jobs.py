"""The one runner of periodic jobs: at start and then every interval (± jitter), failures logged and
counted for health, stopped at once while it waits."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from datetime import UTC, datetime

import pytest

from sightline.jobs import Periodic


def _run_for(job: Periodic, seconds: float) -> float:
    """Runs ``job`` in the background for ``seconds``; how long leaving ``running()`` took."""

    async def main() -> float:
        async with job.running():
            await asyncio.sleep(seconds)
            leaving = time.monotonic()
        return time.monotonic() - leaving

    return asyncio.run(main())


def test_a_job_runs_at_start_and_then_once_per_interval() -> None:
    times: list[float] = []
    job = Periodic("counting", lambda: times.append(time.monotonic()), 0.2)
    started = time.monotonic()
    _run_for(job, 1.1)
    assert times, "the job never ran"
    assert times[0] - started < 0.15  # at start, without waiting an interval first
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) >= 3, times
    assert all(gap >= 0.2 for gap in gaps), gaps
    assert job.runs == len(times)


def test_each_wait_is_the_interval_moved_by_at_most_the_jitter_either_side() -> None:
    job = Periodic("spread", lambda: None, 100.0, jitter=0.1)
    waits = [job.next_wait() for _ in range(2000)]
    assert all(90.0 <= wait <= 110.0 for wait in waits)
    assert min(waits) < 92.0  # the whole band is used
    assert max(waits) > 108.0
    assert Periodic("steady", lambda: None, 100.0).next_wait() == 100.0


@pytest.mark.parametrize(("interval", "jitter"), [(0.0, 0.0), (-1.0, 0.0), (10.0, 1.0), (10.0, -0.1)])
def test_an_interval_of_nothing_or_a_jitter_outside_0_to_1_is_refused(interval: float, jitter: float) -> None:
    with pytest.raises(ValueError, match="periodic job"):
        Periodic("wrong", lambda: None, interval, jitter=jitter)


def test_leaving_running_stops_a_waiting_job_at_once_and_tells_a_running_one() -> None:
    seen_stopping: list[bool] = []
    job = Periodic("hourly", lambda: None, 3600.0)
    assert _run_for(job, 0.2) < 0.5
    assert job.runs == 1

    def long_run() -> None:
        # A long run may look at ``stopping`` and end early when the server stops.
        for _ in range(200):
            if slow.stopping.wait(0.01):
                seen_stopping.append(True)
                return

    slow = Periodic("slow", long_run, 3600.0)
    assert _run_for(slow, 0.2) < 0.5  # the run under way is not waited for
    deadline = time.monotonic() + 1.5
    while not seen_stopping and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen_stopping == [True]


def test_a_failing_run_is_logged_with_its_traceback_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the first run breaks")

    logger = logging.getLogger("sightline.test-jobs")
    job = Periodic("the flaky job", flaky, 0.1, logger=logger)
    with caplog.at_level(logging.ERROR, logger="sightline.test-jobs"):
        _run_for(job, 0.5)
    assert len(calls) >= 2
    failed = [r for r in caplog.records if r.name == "sightline.test-jobs"]
    assert len(failed) == 1
    assert failed[0].getMessage().startswith("the flaky job failed; trying again in")
    assert failed[0].exc_info is not None
    assert "the first run breaks" in str(failed[0].exc_info[1])
    assert job.failures == 1


def test_health_figures_tell_the_last_run_and_since_when_it_has_been_failing() -> None:
    now = [datetime(2026, 3, 1, 12, tzinfo=UTC)]
    broken = threading.Event()

    def work() -> None:
        if broken.is_set():
            raise OSError("disk gone")

    job = Periodic(
        "the watched job",
        work,
        60.0,
        clock=lambda: now[0],
        logger=logging.getLogger("sightline.watched"),
        effect="Nothing is watched meanwhile.",
    )
    assert job.figures() == {
        "last_run_at": None,
        "next_run_at": None,
        "last_error": None,
        "failing_since": None,
        "problem": None,
        "fix": None,
    }
    assert job.run_once()
    assert job.figures()["last_run_at"] == "2026-03-01T12:00:00+00:00"
    assert job.figures()["failing_since"] is None
    broken.set()
    now[0] = datetime(2026, 3, 1, 13, tzinfo=UTC)
    assert not job.run_once()
    now[0] = datetime(2026, 3, 1, 14, tzinfo=UTC)
    assert not job.run_once()
    assert job.figures() == {
        "last_run_at": "2026-03-01T14:00:00+00:00",
        "next_run_at": None,  # set by the loop, which this test does not run
        "last_error": "OSError",
        "failing_since": "2026-03-01T13:00:00+00:00",  # the first failure of the run of failures
        "problem": "The last run of the watched job failed (OSError; 2 failed runs since the server "
        "started). Nothing is watched meanwhile.",
        "fix": "The server's log has the cause under the logger sightline.watched; the job tries "
        "again by itself at its next run.",
    }
    broken.clear()
    assert job.run_once()
    assert (job.figures()["failing_since"], job.figures()["problem"]) == (None, None)


def test_health_figures_tell_when_the_job_runs_next() -> None:
    job = Periodic("the next run", lambda: None, 30.0)
    _run_for(job, 0.3)
    figures = job.figures()
    assert figures["last_run_at"] is not None
    assert figures["next_run_at"] is not None
    wait = datetime.fromisoformat(figures["next_run_at"]) - datetime.fromisoformat(figures["last_run_at"])
    assert 29.5 <= wait.total_seconds() <= 30.5
