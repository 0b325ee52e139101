"""Group commit, the server's half: a bounded queue in front of the writer process.

Batches go to the writer process (``writer_process.py``) through a pipe; it stores whatever is
waiting in one transaction and answers with one ``Outcome`` per group, on which the event loop
answers every request of the group. There is no waiting window, so the group size follows the
load by itself. A request is answered only after the transaction holding its events committed
(SQLite WAL with synchronous=FULL, or PostgreSQL), so an acknowledged event survives a killed
process. The queue is bounded in events: a batch that does not fit is refused (429) before
anything is promised.

The writer process is supervised: if it dies, the batches it held are answered 503 (nothing of
them was acknowledged; the SDK sends them again, and their batch ids store them once), and a new
one starts after a short pause that grows while starts keep failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import msgspec

from sightline.ingest.checkpoint import WalCheckpointer
from sightline.ingest.protocol import (
    FAILED,
    REFUSED,
    STORED,
    Frames,
    Hello,
    Outcome,
    ProtocolError,
    Ready,
    Submit,
    frame,
)
from sightline.metrics.buckets import COMMIT_BOUNDS, LatencyBuckets

log = logging.getLogger("sightline.ingest")

PIPE_SIZE = 1 << 20  # bytes a pipe holds (F_SETPIPE_SZ, Linux): a busy group's worth of batches
START_TIMEOUT = 60.0  # seconds for a new writer process to open the database and say Ready
STOP_TIMEOUT = 60.0  # seconds for the writer to commit what is waiting at shutdown
RESTART_PAUSES = (0.2, 0.5, 1.0, 2.0, 5.0)  # before each restart in a row; the last one repeats


class StorageUnavailableError(Exception):
    """The batch's transaction failed or the writer stopped; nothing of the batch was stored."""


class QueueFullError(Exception):
    """The bounded queue has no room for the batch."""


class WriterDownError(Exception):
    """No writer process is ready to take batches (starting, restarting or stopping)."""


@dataclass(slots=True)
class Pending:
    events: int
    future: asyncio.Future[bool] = field(repr=False)


@dataclass
class CommitStats:
    commits: int = 0
    failures: int = 0
    last_commit_ms: float | None = None
    last_group_batches: int = 0
    last_failure_at: float | None = None
    stored_events: int = 0
    stored_batches: int = 0
    duplicate_batches: int = 0
    writer_starts: int = 0
    writer_pid: int | None = None
    latency: LatencyBuckets = field(default_factory=lambda: LatencyBuckets(COMMIT_BOUNDS))


class GroupCommitter:
    def __init__(
        self,
        database_url: str,
        capacity: int,
        log_level: str = "info",
        geoip_database: str | None = None,
        log_format: str = "text",
        checkpointer: WalCheckpointer | None = None,
    ) -> None:
        self.database_url = database_url
        # SQLite's WAL checkpoints run here, on a thread of the server's, not in the writer: they
        # are system calls for every page copied, and the writer's core is the busier one.
        self.checkpointer = checkpointer
        self.log_level = log_level
        self.geoip_database = geoip_database
        self.log_format = log_format
        self.capacity = capacity
        self.stats = CommitStats()
        self.queued_events = 0  # waiting or being committed; changed on the event loop only
        self._waiting: dict[int, Pending] = {}
        self._seq = 0
        self._out = bytearray()  # frames for the writer, written once per loop iteration
        self._encoder = msgspec.msgpack.Encoder()
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: asyncio.WriteTransport | None = None
        self._ready = False
        self._stopping = False
        self._exited: asyncio.Event | None = None
        self._restart: asyncio.Task[None] | None = None
        self._spawning = False
        self._failed_starts = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        """A writer process is up and taking batches."""
        return self._ready and not self._stopping

    def enqueue(self, submit: Submit, size: int) -> Pending:
        """Send a batch of ``size`` events to the writer; QueueFullError or WriterDownError at once
        when it cannot be taken."""
        if not self.running:
            raise WriterDownError
        if self.queued_events + size > self.capacity:
            raise QueueFullError
        assert self._loop is not None  # running
        self.queued_events += size
        self._seq += 1
        submit.seq = self._seq
        # The loop kept by start(): asyncio.get_running_loop() costs a getpid() system call.
        pending = self._waiting[self._seq] = Pending(size, self._loop.create_future())
        if not self._out:
            self._loop.call_soon(self._flush)  # every batch of this loop iteration in one write
        self._out += frame(self._encoder, submit)
        return pending

    @staticmethod
    async def committed(pending: Pending) -> bool:
        """Wait for the batch's transaction: True when stored now, False when it was stored before.

        Raises StorageUnavailableError when it was not stored (nothing of it was).
        """
        return await pending.future

    async def start(self) -> None:
        """Start the writer process and wait until it is ready (or schedule another try)."""
        self._loop = asyncio.get_running_loop()
        self._stopping = False
        await self._spawn()

    async def stop(self) -> None:
        """Let the writer commit and answer what it was sent, then stop it."""
        self._stopping = True
        if self._restart is not None:
            if not self._spawning:  # a pause before the next start: no need to wait it out
                self._restart.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._restart
            self._restart = None
        if self._pipe is not None:
            self._flush()
            self._pipe.close()  # the writer sees the end of its input, commits, answers, exits
        if self._exited is not None:
            try:
                await asyncio.wait_for(self._exited.wait(), STOP_TIMEOUT)
            except TimeoutError:
                log.error("ingest: the writer did not stop within %.0f s; killing it", STOP_TIMEOUT)
                if self._process is not None:
                    self._process.kill()
                await self._exited.wait()
        self._fail_waiting()
        if self.checkpointer is not None:
            await asyncio.to_thread(self.checkpointer.close)

    async def _spawn(self) -> None:
        assert self._loop is not None
        from_server, to_writer = os.pipe()  # (read end, write end)
        from_writer, to_server = os.pipe()
        set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only; elsewhere 64 KiB works, slower
        for fd in (to_writer, from_writer):
            if set_size is not None:
                with contextlib.suppress(OSError):  # above the system's pipe-max-size
                    fcntl.fcntl(fd, set_size, PIPE_SIZE)
        command = [sys.executable, "-m", "sightline.ingest.writer_process", str(from_server), str(to_server)]
        try:
            process = subprocess.Popen(command, pass_fds=(from_server, to_server), stdin=subprocess.DEVNULL)
        except OSError:
            log.exception("ingest: the writer process could not be started")
            os.close(to_writer)
            os.close(from_writer)
            self._schedule_restart()
            return
        finally:  # the writer's ends, now its own
            os.close(from_server)
            os.close(to_server)
        self._process = process
        self.stats.writer_starts += 1
        exited = self._exited = asyncio.Event()
        ready = asyncio.Event()
        self._pipe, _ = await self._loop.connect_write_pipe(
            asyncio.Protocol, os.fdopen(to_writer, "wb", buffering=0)
        )
        await self._loop.connect_read_pipe(
            lambda: _Outcomes(self, ready, exited), os.fdopen(from_writer, "rb", buffering=0)
        )
        self._pipe.write(
            frame(
                self._encoder,
                Hello(self.database_url, self.log_level, self.geoip_database, self.log_format),
            )
        )
        try:
            await asyncio.wait_for(ready.wait(), START_TIMEOUT)
        except TimeoutError:
            log.error("ingest: the writer process was not ready within %.0f s", START_TIMEOUT)
            process.kill()
            return  # its exit schedules the next try
        if not exited.is_set():
            self._ready = True
            self.stats.writer_pid = process.pid

    def _flush(self) -> None:
        if self._out and self._pipe is not None and not self._pipe.is_closing():
            self._pipe.write(bytes(self._out))
        self._out.clear()

    def _settle(self, outcome: Outcome) -> None:
        """On the event loop: account for the group and answer its requests."""
        self._failed_starts = 0
        if self.checkpointer is not None:
            self.checkpointer.poke()
        self.stats.commits += 1
        self.stats.last_commit_ms = outcome.commit_ms
        self.stats.latency.observe(outcome.commit_ms / 1000)
        self.stats.last_group_batches = len(outcome.seqs)
        failed = False
        for seq, code in zip(outcome.seqs, outcome.codes, strict=True):
            pending = self._waiting.pop(seq, None)
            if pending is None:
                continue
            self.queued_events -= pending.events
            if code in (REFUSED, FAILED):
                failed = True
                if not pending.future.done():
                    pending.future.set_exception(StorageUnavailableError())
                continue
            if code == STORED:
                self.stats.stored_batches += 1
                self.stats.stored_events += pending.events
            else:
                self.stats.duplicate_batches += 1
            if not pending.future.done():
                pending.future.set_result(code == STORED)
        if failed:
            self.stats.failures += 1
            self.stats.last_failure_at = time.monotonic()

    def _writer_exited(self) -> None:
        """The writer's output closed: it exited (or was killed). Answer what it held."""
        self._ready = False
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.close()  # its reader is gone; closing frees our end
        self._out.clear()
        process, self._process = self._process, None
        self.stats.writer_pid = None
        code = _reap(process) if process is not None else None
        if self._waiting:
            self.stats.failures += 1
            self.stats.last_failure_at = time.monotonic()
        self._fail_waiting()
        if not self._stopping:
            log.error("ingest: the writer process stopped (exit code %s); starting a new one", code)
            self._schedule_restart()

    def _fail_waiting(self) -> None:
        waiting, self._waiting = self._waiting, {}
        for pending in waiting.values():
            self.queued_events -= pending.events
            if not pending.future.done():
                pending.future.set_exception(StorageUnavailableError())

    def _schedule_restart(self) -> None:
        if self._stopping or self._loop is None:
            return
        pause = RESTART_PAUSES[min(self._failed_starts, len(RESTART_PAUSES) - 1)]
        self._failed_starts += 1
        self._restart = self._loop.create_task(self._restart_after(pause))

    async def _restart_after(self, pause: float) -> None:
        await asyncio.sleep(pause)
        if not self._stopping:
            self._spawning = True
            try:
                await self._spawn()
            finally:
                self._spawning = False


def _reap(process: subprocess.Popen[bytes]) -> int | None:
    """The exit code of a writer whose output closed (it is exiting)."""
    try:
        return process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


class _Outcomes(asyncio.Protocol):
    """The writer's output pipe: Ready once, then one Outcome per group."""

    def __init__(self, committer: GroupCommitter, ready: asyncio.Event, exited: asyncio.Event) -> None:
        self.committer = committer
        self.ready = ready
        self.exited = exited
        self.frames = Frames()
        self.decoder = msgspec.msgpack.Decoder(Outcome | Ready)
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            for payload in self.frames.feed(data):
                message = self.decoder.decode(payload)
                if isinstance(message, Outcome):
                    self.committer._settle(message)
                else:
                    self.ready.set()
        except (ProtocolError, msgspec.DecodeError):
            log.exception("ingest: the writer process wrote something unreadable; stopping it")
            process = self.committer._process
            if process is not None:
                process.kill()

    def connection_lost(self, exc: Exception | None) -> None:
        self.committer._writer_exited()
        self.ready.set()
        self.exited.set()
