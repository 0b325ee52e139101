"""The server's side of the store: starts and supervises the store process, asks it queries,
and reports its health (``store`` service: engine, lag behind the log, failures in plain words).

Queries wait on a socket in a worker thread, so the server's event loop and interpreter stay
free while the store works. A store process that dies is started again within a second; until
it answers, reports answer 503 with the error shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anyio import to_thread
from sqlalchemy import func, select

from sightline.database import Database
from sightline.database.schema import events
from sightline.errors import ApiError
from sightline.health.registry import DEGRADED, DOWN, OK, ServiceReport
from sightline.store.dialects import CLICKHOUSE, DUCKDB, Dialect
from sightline.store.epoch import micros_of
from sightline.store.launch import Options, main

if TYPE_CHECKING:
    from sightline.store.kept_files import Files

log = logging.getLogger("sightline.store")
BEHIND_SECONDS = 60.0  # a store further behind the log than this is "degraded"
LAG_COUNTED = 100_000  # health counts the events waiting up to this many
START_TIMEOUT = 120.0
Spawned = tuple[multiprocessing.process.BaseProcess, Connection]  # a store process and its start's pipe
STARTING = "The analytics store is starting."
FIRST_WAIT = 60.0  # seconds a report asked just after the server started waits for the store:
# about 1 s on an idle machine, over 10 s seen on a loaded 2-core one (spawn, imports, opening)


class StoreUnavailableError(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(503, "store_unavailable", message)


def kept_room(mb: int | None, memory: int | None = None) -> int:
    """Bytes the reports' kept figures may take: ``mb`` MiB (``--reports-kept-mb``), else an eighth
    of the memory the server may use (``memory``, default the machine's or its cgroup's limit),
    from 128 to 1,024 MiB."""
    if mb is not None:
        return int(mb) << 20
    usable = memory if memory is not None else usable_memory()
    return max(128 << 20, min(1024 << 20, usable // 8))


def usable_memory() -> int:
    """The machine's memory, or less where a cgroup (a container) limits the process's."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            total = min(total, int(Path(limit).read_text().strip()))  # "max": no limit
    return total


class StoreFullError(ApiError):
    """A query the store could not answer within its memory: a 503 saying what to do."""

    def __init__(self, limit: str) -> None:
        super().__init__(
            503,
            "store_full",
            f"The analytics store ran out of memory answering this report ({limit}). Try a shorter "
            "period or fewer sites, or give the store more memory.",
        )


class StoreClient:
    """The analytics store as the server sees it."""

    def __init__(self, settings: Any, db: Database) -> None:
        self.db = db
        self.events_url: str | None = settings.events_url or None
        dialect = CLICKHOUSE if self.events_url else DUCKDB
        self.dialect: Dialect = replace(dialect, exact_below=int(settings.reports_exact_below))
        self.engine = "clickhouse" if self.events_url else "duckdb"
        self.kept_bytes = kept_room(settings.reports_kept_mb)  # the reports' kept figures' room
        self._socket_dir = Path(tempfile.mkdtemp(prefix="sightline-store-"))
        self.options = Options(
            database_url=db.url,
            events_url=self.events_url,
            data_dir=str(settings.data_path),
            memory_mb=int(settings.store_memory_mb),
            interval=float(settings.store_feed_seconds),
            batch=20000,
            address=str(self._socket_dir / "store.sock"),
            authkey=secrets.token_bytes(32),
            log_retention_days=settings.event_log_retention_days,
            niceness=int(settings.store_niceness),
        )
        self._process: multiprocessing.process.BaseProcess | None = None
        self._ready = False  # the process said it listens
        self._settled = threading.Event()  # the first start ended, ready or not
        self._local = threading.local()
        self._asking = 0  # requests to the store process under way, of every thread
        self._asking_lock = threading.Lock()
        self._generation = 0
        self.problem: str | None = None
        self.failing_since: float | None = None
        self.restarts = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    # -- the process -----------------------------------------------------------------------

    def start(self) -> None:
        """Starts the store process and waits until it answers (or says why it cannot)."""
        self.started(self._spawn())

    def started(self, spawned: Spawned) -> None:
        """Waits until the process ``_spawn`` started answers (or says why it cannot)."""
        try:
            self._await_ready(*spawned)
        finally:
            self._settled.set()

    def _spawn(self) -> Spawned:
        """Starts the process (a spawn: it returns at once, the process then loads and opens)."""
        context = multiprocessing.get_context("spawn")
        receiver, sender = context.Pipe(duplex=False)
        Path(self.options.address).unlink(missing_ok=True)
        process = context.Process(
            target=main, args=(self.options, sender), name="sightline-store", daemon=True
        )
        self._ready = False
        process.start()
        sender.close()
        self._process = process
        self._generation += 1
        return process, receiver

    def _await_ready(self, process: multiprocessing.process.BaseProcess, receiver: Connection) -> None:
        started, reported = time.monotonic(), False
        while not receiver.poll(1.0):  # opening may take minutes: an older layout is upgraded first
            if self._stopping or not process.is_alive():
                receiver.close()
                self._fail("the store process stopped while starting")
                return
            if not reported and time.monotonic() - started > START_TIMEOUT:
                reported = True
                self._fail(
                    f"the store process has not started in {START_TIMEOUT:.0f} s: it is still opening "
                    "the store (a store of an older layout is upgraded in place first, which takes "
                    "minutes at tens of millions of events); reports answer once it is ready"
                )
        try:
            kind, detail = receiver.recv()
        except EOFError:
            self._fail("the store process stopped while starting")
            return
        finally:
            receiver.close()
        if kind == "ready":
            self.problem = None
            self.failing_since = None
            self._ready = True
            log.info("analytics store ready (%s, %s events fed)", self.engine, detail.get("watermark"))
        else:
            self._fail(str(detail))

    def _fail(self, problem: str) -> None:
        self.problem = problem
        self.failing_since = self.failing_since or time.time()
        log.error("the analytics store is unavailable: %s", problem)

    def wait_ready(self, seconds: float) -> bool:
        """Whether the store answers, waiting up to ``seconds`` for its first start to end."""
        return self._settled.wait(seconds) and self.alive

    @property
    def alive(self) -> bool:
        process = self._process
        return self._ready and process is not None and process.is_alive() and self.problem is None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Starts the store process beside the server (which does not wait for it: reports answer
        503 until it is ready) and supervises it until the server stops. The process is spawned
        here, before the jobs after this one start theirs, so that its loading does not wait for
        the event loop to run the supervising task."""
        spawned: Spawned | None = None
        try:
            spawned = self._spawn()
        except OSError as error:  # no process now (a limit on processes): the supervisor tries again
            log.warning("the store process could not be started yet: %s", error)
        self._task = asyncio.create_task(self._supervise(spawned), name="sightline-store")
        try:
            yield
        finally:
            self._stopping = True
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            await to_thread.run_sync(self.stop)

    async def _supervise(self, spawned: Spawned | None) -> None:
        if spawned is None:
            await to_thread.run_sync(self.start)
        else:
            await to_thread.run_sync(self.started, spawned)
        while True:
            await asyncio.sleep(1.0)
            process = self._process
            if process is not None and not process.is_alive() and not self._stopping:
                self.restarts += 1
                self._fail(f"the store process stopped (exit code {process.exitcode}); starting it again")
                await to_thread.run_sync(self.start)
            elif self.problem is not None and process is not None and not process.is_alive():
                await asyncio.sleep(4.0)  # e.g. the file is held by another process: try again
                await to_thread.run_sync(self.start)

    def stop(self) -> None:
        process = self._process
        if process is not None and process.is_alive():
            process.terminate()
            process.join(10)
            if process.is_alive():
                process.kill()
                process.join(5)
        self._process = None
        shutil.rmtree(self._socket_dir, ignore_errors=True)

    # -- queries ---------------------------------------------------------------------------

    def _connection(self) -> Connection:
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "generation", None) == self._generation:
            return conn
        if conn is not None:
            conn.close()
        conn = Client(self.options.address, family="AF_UNIX", authkey=self.options.authkey)
        self._local.conn, self._local.generation = conn, self._generation
        return conn

    def ask(self, request: tuple[Any, ...]) -> Any:
        if not self.alive:
            raise StoreUnavailableError(
                "The analytics store is not available right now "
                f"({self.problem or 'it is starting'}). Try again in a few seconds."
            )
        with self._asking_lock:
            self._asking += 1
        try:
            kind, value = self._send(request)
        finally:
            with self._asking_lock:
                self._asking -= 1
        if kind == "full":
            raise StoreFullError(
                "the ClickHouse server's memory limit"
                if self.events_url
                else f"its limit is {self.options.memory_mb} MiB, --store-memory-mb"
            )
        if kind != "ok":
            raise RuntimeError(f"the analytics store refused a query: {value}")
        return value

    def _send(self, request: tuple[Any, ...]) -> tuple[str, Any]:
        for attempt in (1, 2):  # a connection the store process closed is opened again once
            try:
                conn = self._connection()
                conn.send(request)
                kind, value = conn.recv()
                return str(kind), value
            except (OSError, EOFError) as error:
                self._local.conn = None
                if attempt == 2 or not self.alive:
                    raise StoreUnavailableError(
                        "The analytics store stopped answering. Try again in a few seconds."
                    ) from error
        raise AssertionError("unreachable")

    @property
    def asking(self) -> int:
        """Requests to the store process under way now (of every thread)."""
        return self._asking

    def query(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """One report query. Asked while the server is still starting the store, it waits up to
        ``FIRST_WAIT`` seconds for it rather than answering 503 (health does not wait)."""
        if not self._settled.is_set():
            self._settled.wait(FIRST_WAIT)
        rows: list[tuple[Any, ...]] = self.ask(("query", sql, params))
        return rows

    def columns(self, sql: str, params: dict[str, Any]) -> dict[str, Any]:
        """The rows of a report query as one NumPy array per column (``Engine.columns``)."""
        if not self._settled.is_set():
            self._settled.wait(FIRST_WAIT)
        found: dict[str, Any] = self.ask(("columns", sql, params))
        return found

    def keep(
        self,
        sql: str,
        params: dict[str, Any],
        site_id: int | None = None,
        span: tuple[int, int] | None = None,
    ) -> str | None:
        """The name of a table holding the rows of ``sql`` as the store holds them now
        (``store.kept_selections``), or None when the engine keeps none (ClickHouse)."""
        if not self._settled.is_set():
            self._settled.wait(FIRST_WAIT)
        kept: str | None = self.ask(("keep", sql, params, site_id, span))
        return kept

    def kept_days(self, asked: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int, int, Any]]:
        """The overview's spans the embedded store keeps (``store.kept_days``), of the (site, low,
        high) ``asked``: their pageviews and their visitors' keys' files (``KeysFile``), read here
        when asked rather than sent through the store's pipe; none on ClickHouse."""
        if self.engine != "duckdb":
            return []
        if not self._settled.is_set():
            self._settled.wait(FIRST_WAIT)
        found: list[tuple[int, int, int, int, int, str]] = self.ask(("days", [tuple(a) for a in asked]))
        opened: list[tuple[int, int, int, int, Any]] = self._kept_files().opened(found)
        return opened

    def keep_days(self, epoch: str, rows: Sequence[tuple[int, int, int, int, int, Any]]) -> int:
        """Keeps the overview's spans read at their change numbers (site, number, low, high,
        pageviews, visitors' keys) beside the embedded store's file, those no later change
        touched (how many): the keys are written to files here, the store keeps their rows."""
        if self.engine != "duckdb" or not rows:
            return 0
        try:
            named = self._kept_files().named(rows)
        except OSError as error:  # a full disk, say: the spans are read from the events again
            log.warning("the overview's days were not kept beside the store: %s", error)
            return 0
        added: int = self.ask(("keep_days", epoch, named))
        return added

    def _kept_files(self) -> Files:
        # Here: the keys are NumPy arrays (the overview's start-up read loads the module beforehand).
        from sightline.store.kept_files import DIRECTORY, Files

        return Files(Path(self.options.data_dir) / DIRECTORY)

    def changes(self, site_id: int, after: int) -> dict[str, Any]:
        """What changed of a site's data after change number ``after`` (``store.changes``)."""
        if not self._settled.is_set():
            self._settled.wait(FIRST_WAIT)
        found: dict[str, Any] = self.ask(("changes", site_id, after))
        return found

    def changes_many(self, asked: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
        """``changes`` of several (site, after) pairs in one request."""
        if not self._settled.is_set():
            self._settled.wait(FIRST_WAIT)
        found: list[dict[str, Any]] = self.ask(("changes_many", [tuple(pair) for pair in asked]))
        return found

    # -- health ----------------------------------------------------------------------------

    def lag(self, watermark: int) -> tuple[int, float]:
        """(events in the log after the watermark, seconds since the oldest of them happened)."""
        after = events.c.id > watermark
        with self.db.read() as conn:
            # The events waiting, counted (ids have gaps: a difference of ids is no count), up to
            # LAG_COUNTED; beyond it, the difference of ids says how far.
            counted = select(events.c.id).where(after).limit(LAG_COUNTED).subquery()
            behind = int(conn.execute(select(func.count()).select_from(counted)).scalar_one())
            if behind >= LAG_COUNTED:
                newest = conn.execute(select(func.max(events.c.id))).scalar()
                behind = max(behind, int(newest or 0) - watermark)
            oldest = conn.execute(
                select(micros_of(events.c.time, self.db.dialect)).where(after).order_by(events.c.id).limit(1)
            ).scalar()
        if not behind or oldest is None:
            return behind, 0.0
        now = datetime.now(UTC).timestamp()
        return behind, round(max(0.0, now - int(oldest) / 1e6), 1)

    def probe(self) -> ServiceReport:
        process = self._process
        figures: dict[str, Any] = {
            "engine": self.engine,
            "restarts": self.restarts,
            "pid": process.pid if process is not None and process.is_alive() else None,
        }
        status: dict[str, Any] | None = None
        try:
            status = self.ask(("status",))
        except (StoreUnavailableError, StoreFullError, RuntimeError):
            status = None
        problem, since = self.problem, self.failing_since
        if status is None and problem is None and not self._settled.is_set():
            problem = STARTING
        if status is not None and status.get("problem"):
            problem, since = status["problem"], status["failing_since"]
        watermark = int(status["watermark"]) if status else 0
        lag_events, lag_seconds = self.lag(watermark)
        figures.update(
            lag_events=lag_events,
            lag_seconds=lag_seconds,
            role=status.get("role") if status else None,
            fed_events=status["fed_events"] if status else None,
            feed_rate=status["rate"] if status else None,
            failing_since=datetime.fromtimestamp(since, UTC).isoformat() if since else None,
            problem=problem,
            fix=_fix(problem, self.engine) if problem else None,
            check=status.get("check") if status else None,  # the self-check's findings (store.check)
            checkpoints=status.get("checkpoints") if status else None,  # the embedded store's
            last_checkpoint_ms=status.get("last_checkpoint_ms") if status else None,
            checkpoint_error=status.get("checkpoint_error") if status else None,
        )
        if status is None:
            return ServiceReport(DOWN, figures)
        unrepaired = bool(figures["check"] and figures["check"].get("unrepaired"))
        state = DEGRADED if problem or unrepaired or lag_seconds > BEHIND_SECONDS else OK
        return ServiceReport(state, figures)


def _fix(problem: str, engine: str) -> str:
    if problem == STARTING:
        return "Wait a few seconds: the server has just started, and reports answer once the store is ready."
    text = problem.lower()
    if "another node feeds" in text:
        return (
            "Several nodes need one shared store: start every node with the same "
            "--events-url clickhouse://... (docs/scaling.md), or run a single node."
        )
    if "in use by another process" in text:
        return (
            "Another Sightline process is using this data directory's analytics store. "
            "Stop it, or give each server its own --data-dir."
        )
    if "no space" in text or "disk" in text:
        return "The disk of the data directory is full. Free some space; the store catches up by itself."
    if engine == "clickhouse":
        return "Check that the ClickHouse server in --events-url is running and reachable."
    return "Check the server's log for the error. Reports show the last figures the store holds."
