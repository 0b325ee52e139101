"""Decoding recording chunks in a process of its own, so the server's interpreter never parses one.

A chunk is up to 1 MiB of gzip that may inflate to ``chunks.MAX_RAW`` bytes of JSON. Inflating
and checking that much holds an interpreter for milliseconds; in the server's process that time
would be taken from the event loop (``/i/events`` included). ``ChunkDecoder`` hands each body to
one worker process (``concurrent.futures.ProcessPoolExecutor``, spawned, at a lower CPU priority
than the server and the writer, ending within a second of the server however it ends) and
awaits the answer without blocking the loop. The worker bounds JSON nesting with its recursion
limit (``chunks.MAX_DEPTH``) and answers with the ``Chunk``, or the ``Refusal`` the client is
told about.

At most ``WAITING`` chunks wait for the worker at once; more are answered 503 ``recordings_busy``
with Retry-After (the recorder retries), so the bodies held in the server stay bounded. If the
worker dies it is replaced at the next chunk; the chunks it held are answered 503 as well.

The worker's side is ``worker``. May import: ``sightline.recordings.chunks``,
``sightline.recordings.worker``, ``sightline.errors``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import os
from collections.abc import AsyncIterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager
from dataclasses import replace

from sightline.errors import ApiError
from sightline.recordings import chunks
from sightline.recordings.worker import Refusal, decode_in_worker, prepare_worker

log = logging.getLogger("sightline.recordings")

WAITING = 32
RETRY_AFTER = "2"
READY_SECONDS = 30.0


class ChunkDecoder:
    def __init__(self, waiting: int = WAITING) -> None:
        self.waiting = waiting
        self.pending = 0
        self.pid: int | None = None
        self.restarts = 0
        self.busy = 0  # chunks answered 503 because too many were waiting
        self._pool: ProcessPoolExecutor | None = None
        self._warm: Future[int] | None = None
        self._closed = False

    def _start(self) -> ProcessPoolExecutor:
        pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=prepare_worker,
            initargs=(os.getpid(),),
        )
        self._pool = pool
        self._warm = pool.submit(os.getpid)  # starts the worker now
        self._warm.add_done_callback(self._note_pid)
        return pool

    def _note_pid(self, future: Future[int]) -> None:
        if not future.cancelled() and future.exception() is None:
            self.pid = future.result()

    async def decode(self, body: bytes) -> chunks.Chunk:
        """The chunk of ``body``; ``ApiError`` with the refusal (4xx, or 503 with Retry-After)."""
        if self.pending >= self.waiting:
            self.busy += 1
            message = "Too many recording chunks are waiting to be checked; try again shortly."
            raise ApiError(503, "recordings_busy", message, headers={"Retry-After": RETRY_AFTER})
        self.pending += 1
        try:
            result = await self._run(body)
        finally:
            self.pending -= 1
        if isinstance(result, Refusal):
            raise ApiError(result.status, result.code, result.message, field=result.field)
        return result if result.stored else replace(result, stored=body)

    async def _run(self, body: bytes) -> chunks.Chunk | Refusal:
        if self._closed:
            raise _unavailable()
        pool = self._pool or self._start()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, decode_in_worker, body)
        except BrokenProcessPool:
            if self._pool is pool and not self._closed:
                log.error("the recordings decoder process stopped; a new one starts with the next chunk")
                self._pool = None
                self.restarts += 1
                pool.shutdown(wait=False, cancel_futures=True)
            raise _unavailable() from None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The worker runs from the server's start to its end (``ready`` waits for it to answer)."""
        self._start()
        try:
            yield
        finally:
            self._closed = True
            pool, self._pool = self._pool, None
            if pool is not None:
                await asyncio.to_thread(functools.partial(pool.shutdown, wait=True, cancel_futures=True))

    async def ready(self, timeout: float = READY_SECONDS) -> None:
        """Wait until the worker answers (the server's start, so the first chunk waits for nothing)."""
        if self._warm is None:
            return
        try:
            await asyncio.wait_for(asyncio.wrap_future(self._warm), timeout)
        except Exception:  # a slow or failed start is not fatal: the next chunk starts another
            log.warning("the recordings decoder process was not ready within %.0f s", timeout)

    def figures(self) -> dict[str, object]:
        return {"pid": self.pid, "restarts": self.restarts, "waiting": self.pending, "busy": self.busy}


def _unavailable() -> ApiError:
    message = "The recording service is restarting; try again shortly."
    return ApiError(503, "recordings_unavailable", message, headers={"Retry-After": RETRY_AFTER})
