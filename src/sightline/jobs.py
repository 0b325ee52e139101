"""Periodic background jobs: one way to run a job now and then every so often while the server runs.

``Periodic(name, run, interval)`` calls ``run`` in a worker thread (so the event loop never waits on
it) at start and then after every wait of ``interval`` seconds, each wait drawn at random within
``jitter`` (a share of the interval) either side, so that several nodes do not run a job in step.
A run that raises is logged with its traceback and the loop goes on; ``figures`` says when the job
last ran, when it runs next, how the last run ended and since when it has been failing (in plain
words: what a failure means, given as ``effect``, and what to do), for a health probe. Leaving
``running()`` stops the loop at once, and does not wait for a run under way: that run goes on in
its thread (which cannot be stopped from outside) with ``stopping`` set, which a long job checks
between its steps to end early.

Imports nothing else from Sightline.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from anyio import to_thread

log = logging.getLogger("sightline.jobs")


@dataclass
class LastRun:
    """How the job's latest run went."""

    started_at: datetime
    finished_at: datetime | None = None
    error: str | None = None  # the exception's class name when it failed


class Periodic:
    """``run`` at start and then every ``interval`` seconds (± ``jitter`` of it) while ``running()``."""

    def __init__(
        self,
        name: str,
        run: Callable[[], object],
        interval: float,
        *,
        jitter: float = 0.0,
        logger: logging.Logger = log,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        effect: str = "",
    ) -> None:
        if interval <= 0:
            raise ValueError("a periodic job needs an interval above 0 seconds")
        if not 0 <= jitter < 1:
            raise ValueError("a periodic job's jitter is a share of its interval, from 0 up to 1")
        self.name = name
        self.run = run
        self.interval = interval
        self.jitter = jitter
        self.logger = logger
        self.clock = clock
        self.effect = effect  # what a failing run means for the owner, one sentence
        self.last: LastRun | None = None
        self.next_run_at: datetime | None = None
        self.failing_since: datetime | None = None
        self.runs = 0
        self.failures = 0
        self.stopping = threading.Event()  # set when the server stops; a long run may look at it

    def next_wait(self) -> float:
        """Seconds until the next run: the interval, moved at random by at most ``jitter`` of it."""
        if not self.jitter:
            return self.interval
        return self.interval * (1 + random.uniform(-self.jitter, self.jitter))

    def run_once(self) -> bool:
        """One run in this thread, its outcome recorded and any failure logged; whether it succeeded."""
        started = self.clock()
        last = LastRun(started_at=started)
        self.runs += 1
        try:
            self.run()
        except Exception as exc:
            last.error = type(exc).__name__
            self.failures += 1
            self.failing_since = self.failing_since or started
            self.logger.exception("%s failed; trying again in %.0f s", self.name, self.interval)
        else:
            self.failing_since = None
        last.finished_at = self.clock()
        self.last = last
        return last.error is None

    def figures(self) -> dict[str, Any]:
        """The latest run, the next and any failure (``problem`` and ``fix`` in plain words, None
        while runs succeed), for a health probe."""
        last = self.last
        figures: dict[str, Any] = {
            "last_run_at": last.started_at.isoformat() if last else None,
            "next_run_at": self.next_run_at.isoformat() if self.next_run_at else None,
            "last_error": last.error if last else None,
            "failing_since": self.failing_since.isoformat() if self.failing_since else None,
            "problem": None,
            "fix": None,
        }
        if last is not None and last.error is not None:
            runs = "run" if self.failures == 1 else "runs"
            figures["problem"] = " ".join(
                part
                for part in (
                    f"The last run of {self.name} failed ({last.error}; {self.failures} failed {runs} "
                    "since the server started).",
                    self.effect,
                )
                if part
            )
            figures["fix"] = (
                f"The server's log has the cause under the logger {self.logger.name}; the job tries "
                "again by itself at its next run."
            )
        return figures

    async def loop(self) -> None:
        while True:
            await to_thread.run_sync(self.run_once)
            wait = self.next_wait()
            self.next_run_at = self.clock() + timedelta(seconds=wait)
            await asyncio.sleep(wait)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the job in the background for as long as the ``async with`` lasts."""
        self.stopping.clear()
        task = asyncio.create_task(self.loop(), name=self.name)
        try:
            yield
        finally:
            self.stopping.set()
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
