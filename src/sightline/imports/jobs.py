"""Running imports in the background: one at a time, in a thread of their own, with progress.

A job streams its upload (``formats``), writes its figures in batches (each batch one transaction
that also records the bytes and lines read, which the console polls; a file whose figures come
only once it is read whole, as Umami's events, has its bytes read noted every second meanwhile),
and marks the import ``done`` in the transaction of its last batch, so reports see all of it or
nothing. A job whose import was deleted meanwhile stops. The upload waits in the data directory
until its job ends; a server that stops mid-import starts the job again from the beginning when it
starts (the import's partial rows are removed first).

Every write transaction here is a bounded step, so ingest's commits, which wait for SQLite's one
write lock, never wait long: a batch's size follows how long the last one held the lock
(``database.reclaim.StepSize``: halved above ``STEP_MS``, doubled well under it), and the lock is
left free between two steps. Figures leave the same way: a deleted import's (``delete``, which
finishes on the next start if the server stopped), a failed one's, a restarted one's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from anyio import to_thread
from sqlalchemy import Connection, delete, insert, literal_column, select, update
from sqlalchemy.sql.expression import ColumnClause

from sightline.database import Database
from sightline.database.reclaim import StepSize
from sightline.database.schema import imported_figures, imports, sites
from sightline.database.types import utcnow
from sightline.imports import service
from sightline.imports.formats import Figure, ImportFileError, Upload, open_upload

log = logging.getLogger("sightline.imports")
BATCH = 5000  # rows of one step at most
MIN_BATCH = 50
STEP_MS = 20.0  # a step that held the write lock longer gets fewer rows next time
PROGRESS_EVERY = 1.0  # seconds between notes of the bytes read while no batch is written


class StoppedError(Exception):
    """The import was deleted, or the server is stopping."""


class Importer:
    """The import jobs of one server."""

    def __init__(self, db: Database, directory: Path, max_bytes: int) -> None:
        self.db = db
        self.directory = directory
        self.max_bytes = max_bytes
        self._pool: ThreadPoolExecutor | None = None
        self._stopping = threading.Event()
        self.step = StepSize(500, MIN_BATCH, BATCH, STEP_MS)

    def submit(self, import_id: int) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="sightline-import")
        self._pool.submit(self._guarded, import_id)

    def delete(self, import_id: int) -> None:
        """Removes a deleted import's figures and then its row, in the background."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="sightline-import")
        self._pool.submit(self._guarded_removal, import_id)

    def resume(self) -> None:
        """Starts again the imports a stopped server left unfinished whose upload is here, and
        the removal of deleted imports' figures."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.db.read() as conn:
            waiting = service.unfinished(conn)
            deleted = service.being_deleted(conn)
        for import_id in deleted:
            self.delete(import_id)
        for import_id in waiting:
            if service.upload_path(self.directory, import_id).exists():
                self.submit(import_id)

    def stop(self) -> None:
        self._stopping.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def _guarded(self, import_id: int) -> None:
        try:
            self.run(import_id)
        except StoppedError:
            pass
        except Exception as error:
            log.exception("import %s failed", import_id)
            self._fail(
                import_id,
                {
                    "code": "import_failed",
                    "message": "The import stopped on a server error "
                    f"({type(error).__name__}); nothing of it is shown. Upload the file again.",
                },
            )

    def _guarded_removal(self, import_id: int) -> None:
        try:
            self.remove(import_id)
        except StoppedError:
            pass
        except Exception:
            log.exception("removing the figures of deleted import %s failed", import_id)

    def remove(self, import_id: int) -> None:
        """A deleted import's figures in bounded steps, then its row."""
        self._clear(import_id)
        with self.db.begin() as conn:
            conn.execute(
                delete(imports).where(imports.c.id == import_id, imports.c.status == service.DELETING)
            )

    def _clear(self, import_id: int) -> None:
        """Deletes the import's figures, a bounded step at a time."""
        while True:
            if self._stopping.is_set():
                raise StoppedError
            started = time.perf_counter()
            with self.db.begin() as conn:
                gone = _delete_step(conn, import_id, self.step.value)
            asked = self.step.value
            self._took(started)
            if gone < asked:
                return

    def _took(self, started: float) -> None:
        self.step.took((time.perf_counter() - started) * 1000)
        self.step.rest()

    def run(self, import_id: int) -> None:
        path = service.upload_path(self.directory, import_id)
        with self.db.read() as conn:
            row = conn.execute(select(imports).where(imports.c.id == import_id)).first()
            zone = conn.execute(
                select(sites.c.timezone).where(sites.c.id == imports.c.site_id, imports.c.id == import_id)
            ).scalar()
        if row is None or row.status not in (service.QUEUED, service.RUNNING):
            path.unlink(missing_ok=True)
            return
        self._clear(import_id)  # what an earlier run left
        with self.db.begin() as conn:
            started = conn.execute(
                update(imports)
                .where(imports.c.id == import_id, imports.c.status.in_((service.QUEUED, service.RUNNING)))
                .values(status=service.RUNNING, read_bytes=0, rows=0, error=None)
            ).rowcount
        if not started:
            path.unlink(missing_ok=True)
            return
        found = row._mapping
        try:
            upload = open_upload(
                path, str(found["filename"]), str(found["kind"]), self.max_bytes, str(zone or "UTC")
            )
            self._write(import_id, int(found["site_id"]), upload)
        except ImportFileError as error:
            self._fail(import_id, error.as_error())
        finally:
            if not self._stopping.is_set():
                path.unlink(missing_ok=True)

    def _write(self, import_id: int, site_id: int, upload: Upload) -> None:
        read = [0]
        noted = [time.monotonic()]

        def progress(size: int) -> None:
            read[0] += size
            if time.monotonic() - noted[0] >= PROGRESS_EVERY:  # a file read whole before its figures
                noted[0] = time.monotonic()
                self._note(import_id, read[0])

        batch: list[dict[str, Any]] = []
        lines = 0
        for figure in upload.figures(progress):
            batch.append(_row(import_id, site_id, figure))
            lines += 1
            if len(batch) >= self.step.value:
                self._flush(import_id, batch, read[0], lines, last=False)
                batch = []
        self._flush(import_id, batch, upload.size, lines, last=True)

    def _note(self, import_id: int, read: int) -> None:
        """Records the bytes read between batches (Umami's events are all read before the first)."""
        if self._stopping.is_set():
            raise StoppedError
        with self.db.begin() as conn:
            noted = conn.execute(
                update(imports)
                .where(imports.c.id == import_id, imports.c.status == service.RUNNING)
                .values(read_bytes=read)
            ).rowcount
        if not noted:  # deleted meanwhile
            raise StoppedError

    def _flush(
        self, import_id: int, batch: list[dict[str, Any]], read: int, lines: int, *, last: bool
    ) -> None:
        if self._stopping.is_set():
            raise StoppedError
        started = time.perf_counter()
        with self.db.begin() as conn:
            values: dict[str, Any] = {"read_bytes": read, "rows": lines}
            if last:
                values.update(status=service.DONE, finished_at=utcnow())
            changed = conn.execute(
                update(imports)
                .where(imports.c.id == import_id, imports.c.status == service.RUNNING)
                .values(**values)
            ).rowcount
            if not changed:  # deleted meanwhile: its removal takes the rows written so far
                raise StoppedError
            if batch:
                conn.execute(insert(imported_figures), batch)
        self._took(started)

    def _fail(self, import_id: int, error: dict[str, str]) -> None:
        with self.db.begin() as conn:
            failed = conn.execute(
                update(imports)
                .where(imports.c.id == import_id, imports.c.status != service.DELETING)
                .values(status=service.FAILED, error=error, finished_at=utcnow())
            ).rowcount
        if failed:
            self._clear(import_id)


def _delete_step(conn: Connection, import_id: int, size: int) -> int:
    """Deletes at most ``size`` of the import's figures (chosen by the row's physical id: SQLite's
    rowid, PostgreSQL's ctid, as the table has no key of its own); how many went."""
    row: ColumnClause[Any] = literal_column("rowid" if conn.dialect.name == "sqlite" else "ctid")
    chosen = (
        select(row).select_from(imported_figures).where(imported_figures.c.import_id == import_id).limit(size)
    )
    return int(conn.execute(delete(imported_figures).where(row.in_(chosen))).rowcount)


def _row(import_id: int, site_id: int, figure: Figure) -> dict[str, Any]:
    return {"import_id": import_id, "site_id": site_id, **asdict(figure)}


@asynccontextmanager
async def running(importer: Importer) -> AsyncIterator[None]:
    """Resumes unfinished imports at start; lets the running one stop between batches at the end."""
    await to_thread.run_sync(importer.resume)
    try:
        yield
    finally:
        await to_thread.run_sync(importer.stop)
