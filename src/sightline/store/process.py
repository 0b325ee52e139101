"""The store process: feeds the store from the log and answers the reports' queries.

It is started (``multiprocessing`` spawn) and supervised by the server (``client``). It owns the
engine: the embedded DuckDB file may be opened by one process only, and ClickHouse inserts are
batched here. Its work never holds the server's interpreter: queries and feeding run here, and
the server only waits on a socket. Requests arrive over ``multiprocessing.connection`` (a Unix
socket with an authentication key): ``("query", sql, params)`` answers ``("ok", rows)`` or
``("error", message)`` (``("full", message)`` when the engine ran out of memory);
``("keep", sql, params)`` answers the name of a table holding the
query's rows while the site's data stays as it was (``store.kept_selections``; None on ClickHouse);
``("days", [(site, low, high), ...])`` answers the overview's spans the embedded store keeps,
with their keys' files (``store.kept_days``), ``("keep_days", epoch, rows)`` keeps those read at
a change number no later change touched, their keys in files the server wrote (how many);
``("changes", site, after)`` answers what changed of the site after that change number
(``store.changes``: every figure kept between requests is dropped by it),
``("changes_many", [(site, after), ...])`` the same of several sites at once;
``("status",)`` answers the feed's figures; ``("export", directory)``
copies the embedded store there for a backup (``store.snapshot``). Between feeding steps it
applies maintenance (``maintenance``), checks the store against the log (``check``), from its start
on, and writes the embedded store's WAL into its file once it is large (``Embedded.checkpoint``).
The process leaves when its parent is gone, or when the server stops it (SIGTERM: the step under
way ends, then the store is closed cleanly, its kept days kept for the next start). Of several
nodes on one PostgreSQL log, one feeds (a lease, ``database.lease``); another takes over within
seconds when it dies.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sightline.database import open_database
from sightline.database.lease import Lease
from sightline.store import snapshot
from sightline.store.check import SelfCheck
from sightline.store.engines import Embedded, Engine, StoreBusyError, open_engine
from sightline.store.feed import Feeder
from sightline.store.launch import Options
from sightline.store.maintenance import Maintenance
from sightline.store.ordering import Ordering

log = logging.getLogger("sightline.store")
PROGRESS_EVERY = 15.0  # seconds between two progress lines while a backlog is fed
STANDBY_LOOK = 2.0  # seconds between two asks for the feed's lease by a node that does not hold it
STANDBY_PROBLEM = (
    "another node feeds the events log into its own analytics store, so this node's store is not "
    "fed and its reports fall behind"
)


class Status:
    """What the feed has done, for the server's health report."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine.name
        self.watermark = engine.watermark()
        self.fed_events = 0
        self.failing_since: float | None = None
        self.problem: str | None = None
        self.last_step_ms: float | None = None
        self.rate = 0.0  # events per second over the last busy minute
        self.role = "feeder"  # or "standby": another node of the same log feeds (database.lease)
        self.check: dict[str, Any] | None = None  # the self-check's findings (check.Findings)
        self.checkpoints = 0  # the embedded store's checkpoints since start (``Embedded.checkpoint``)
        self.last_checkpoint_ms: float | None = None
        self.checkpoint_error: str | None = None  # the last checkpoint's failure, until one succeeds

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _serve(conn: Connection, engine: Engine, status: Status) -> None:
    with conn:
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):
                return
            try:
                if request[0] == "query":
                    conn.send(("ok", engine.query(request[1], request[2])))
                elif request[0] == "columns":  # NumPy arrays travel as bytes, not as tuples
                    conn.send(("ok", engine.columns(request[1], request[2])))
                elif request[0] == "keep":
                    site = request[3] if len(request) > 3 else None
                    span = tuple(request[4]) if len(request) > 4 and request[4] is not None else None
                    kept = (
                        engine.keep(request[1], request[2], site, span)
                        if isinstance(engine, Embedded)
                        else None
                    )
                    conn.send(("ok", kept))
                elif request[0] == "days":  # the overview's kept days (store.kept_days)
                    found = engine.kept_days(request[1]) if isinstance(engine, Embedded) else []
                    conn.send(("ok", found))
                elif request[0] == "keep_days":
                    added = engine.keep_days(request[1], request[2]) if isinstance(engine, Embedded) else 0
                    conn.send(("ok", added))
                elif request[0] == "changes":  # what changed of a site after a change number
                    conn.send(("ok", engine.changes.since(int(request[1]), int(request[2]))))
                elif request[0] == "changes_many":  # the same for several (site, after) pairs
                    conn.send(("ok", [engine.changes.since(int(s), int(a)) for s, a in request[1]]))
                elif request[0] == "status":
                    conn.send(("ok", status.as_dict()))
                elif request[0] == "export" and isinstance(engine, Embedded):
                    conn.send(("ok", [str(p) for p in engine.export(Path(request[1]))]))
                else:
                    conn.send(("error", f"unknown request {request[0]!r}"))
            except (EOFError, OSError):
                return
            except Exception as error:  # a query the engine refused: the caller raises it
                log.warning("a store query failed: %s", error)
                kind = "full" if out_of_memory(error) else "error"
                conn.send((kind, str(error).splitlines()[0][:500]))


def out_of_memory(error: Exception) -> bool:
    """Whether the engine refused a query for want of memory (its limit, not a fault of the query)."""
    text = str(error)
    return "Out of Memory Error" in text or "MEMORY_LIMIT_EXCEEDED" in text


def _accept(listener: Listener, engine: Engine, status: Status) -> None:
    while True:
        try:
            conn = listener.accept()
        except OSError:
            return
        except Exception as error:  # a client that failed the authentication
            log.warning("a connection to the store process was refused: %s", error)
            continue
        threading.Thread(target=_serve, args=(conn, engine, status), daemon=True).start()


def main(options: Options, ready: Connection) -> None:
    """Entry point of the process (``multiprocessing`` spawn target)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    parent = os.getppid()
    threading.Thread(target=_load_arrow_compute, name="sightline-store-arrow", daemon=True).start()
    try:
        engine = open_engine(options.events_url, Path(options.data_dir), options.memory_mb)
    except StoreBusyError as error:
        ready.send(("busy", str(error)))
        return
    except Exception as error:
        ready.send(("error", str(error).splitlines()[0][:500]))
        return
    db = open_database(options.database_url, migrate=False)
    status = Status(engine)
    feeder = Feeder(db, engine, options.batch)
    maintenance = Maintenance(db, engine, feeder, options.log_retention_days)
    check = SelfCheck(db, engine, feeder, options.log_retention_days)
    try:  # before the first step: new events get ids past the watermark (check.keep_positions)
        check.keep_positions()
    except Exception:
        log.exception("the log's next id could not be checked against the store's watermark")
    ordering = Ordering(engine) if isinstance(engine, Embedded) else None
    # A backlog for the server's worker threads that connect at once (the default is 1).
    listener = Listener(options.address, family="AF_UNIX", backlog=128, authkey=options.authkey)
    threading.Thread(target=_accept, args=(listener, engine, status), daemon=True).start()
    if isinstance(engine, Embedded):  # `sightline backup` asks this process for a copy
        snapshot.publish(Path(options.data_dir), options.address, options.authkey)
    ready.send(("ready", status.as_dict()))
    ready.close()
    window: list[tuple[float, int]] = []
    said = time.monotonic()
    lease = Lease(db, "the analytics store's feed")
    # Asked to stop (the server stopping it): the step under way ends, then the store closes
    # cleanly, which keeps its file's kept days for the next start (``store.kept_days``).
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    while os.getppid() == parent and not stopping.is_set():
        try:
            if not lease.held():
                _stand_by(engine, status)
                stopping.wait(STANDBY_LOOK)
                continue
            status.role = "feeder"
            fed = feeder.step()
            maintenance.run()
            if ordering is not None and not feeder.behind:  # not while catching up
                ordering.run()
            if not feeder.behind:
                _check(check, status)
            if isinstance(engine, Embedded):
                _checkpoint(engine, status)
            status.failing_since = status.problem = None
        except Exception as error:
            fed = 0
            cause = db.note_outage(error)  # the database's outage: logged once, not each retry
            if cause is None:
                log.exception("feeding the analytics store failed; it tries again")
            status.failing_since = status.failing_since or time.time()
            if cause is not None:
                status.problem = cause.problem
            else:
                status.problem = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
        now = time.monotonic()
        if fed:
            status.watermark = engine.watermark()
            status.fed_events += fed
            status.last_step_ms = feeder.last_step_ms
            window.append((now, fed))
        window = [(t, n) for t, n in window if now - t <= 60]
        span = now - window[0][0] if len(window) > 1 else 0
        status.rate = round(sum(n for _, n in window[1:]) / span, 1) if span else 0.0
        if feeder.behind and now - said >= PROGRESS_EVERY:  # a backlog: say how it goes
            said = now
            log.info(
                "analytics store: %d events fed since start (%.0f/s), up to event %d",
                status.fed_events,
                status.rate,
                status.watermark,
            )
        if not feeder.behind:
            # Caught up (a part batch read the log to its end): look again after the interval. A
            # step costs tens of milliseconds whatever its size (DuckDB plans and commits), so
            # under steady traffic fewer, larger steps leave the cores to ingest (docs/performance.md).
            stopping.wait(options.interval)
    lease.release()
    snapshot.withdraw(Path(options.data_dir))
    listener.close()
    feeder.close()
    engine.close()
    logging.shutdown()
    os._exit(0)  # all closed: the interpreter's teardown (seconds, its threads on sockets) is not needed


def _load_arrow_compute() -> None:
    """Arrow loads its compute functions at their first call, a third of a second of one core:
    here, beside the engine's opening, rather than in the first feed step, beside the first
    requests the process answers once it is ready."""
    pc.equal(pa.array([0]), 0)


def _check(check: SelfCheck, status: Status) -> None:
    """A round of the self-check; one that fails is said in health and tried at the next round."""
    try:
        check.run()
    except Exception as error:
        log.exception("the store's self-check failed; it tries again")
        said = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
        check.found.add(check.found.unrepaired, f"the check itself failed: {said}")
    status.check = check.found.as_dict()


def _checkpoint(engine: Embedded, status: Status) -> None:
    """The WAL written into the store's file once it is large enough, between two of the store's
    writes (``Embedded.checkpoint``: the reports' reads go on meanwhile). One that fails is tried
    after the next step: the WAL keeps every change meanwhile, and DuckDB bounds it itself."""
    try:
        took = engine.checkpoint()
    except Exception as error:
        if status.checkpoint_error is None:  # said once, not at every step it fails again
            log.warning("the analytics store's checkpoint failed (%s); it is tried after each step", error)
        status.checkpoint_error = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
        return
    status.checkpoint_error = None
    if took is not None:
        status.checkpoints += 1
        status.last_checkpoint_ms = round(took, 1)


def _stand_by(engine: Engine, status: Status) -> None:
    """Another node holds the feed. On a shared ClickHouse that is as it should be (its feed shows
    in the shared watermark); an embedded store of this node's own is then never fed: a fault."""
    status.role = "standby"
    status.watermark = engine.watermark()
    if isinstance(engine, Embedded):
        status.problem = STANDBY_PROBLEM
        status.failing_since = status.failing_since or time.time()
    else:
        status.problem = status.failing_since = None


def ask(address: str, authkey: bytes, request: tuple[Any, ...]) -> Any:
    """One request on a fresh connection (the CLI and tests; the server keeps connections)."""
    with Client(address, family="AF_UNIX", authkey=authkey) as conn:
        conn.send(request)
        kind, value = conn.recv()
    if kind != "ok":
        raise RuntimeError(value)
    return value
