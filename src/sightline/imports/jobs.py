"""Running imports in the background: one at a time, in a thread of their own, with progress.

A job streams its upload (``formats``), writes its figures in batches (each batch one
transaction that also records the bytes and lines read, which the console polls), and marks the
import ``done`` in the transaction of its last batch, so reports see all of it or nothing. A job
whose import was deleted meanwhile stops. The upload waits in the data directory until its job
ends; a server that stops mid-import starts the job again from the beginning when it starts
(the import's partial rows are removed first).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from anyio import to_thread
from sqlalchemy import delete, insert, select, update

from sightline.imports import service
from sightline.imports.formats import Figure, ImportFileError, Upload, open_upload
from sightline.storage import Database
from sightline.storage.schema import imported_figures, imports
from sightline.storage.types import utcnow

log = logging.getLogger("sightline.imports")
BATCH = 5000


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

    def submit(self, import_id: int) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="sightline-import")
        self._pool.submit(self._guarded, import_id)

    def resume(self) -> None:
        """Starts again the imports a stopped server left unfinished whose upload is here."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.db.read() as conn:
            waiting = service.unfinished(conn)
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

    def run(self, import_id: int) -> None:
        path = service.upload_path(self.directory, import_id)
        with self.db.begin() as conn:
            row = conn.execute(select(imports).where(imports.c.id == import_id)).first()
            if row is None:
                path.unlink(missing_ok=True)
                return
            conn.execute(delete(imported_figures).where(imported_figures.c.import_id == import_id))
            conn.execute(
                update(imports)
                .where(imports.c.id == import_id)
                .values(status=service.RUNNING, read_bytes=0, rows=0, error=None)
            )
        found = row._mapping
        try:
            upload = open_upload(path, str(found["filename"]), str(found["kind"]), self.max_bytes)
            self._write(import_id, int(found["site_id"]), upload)
        except ImportFileError as error:
            self._fail(import_id, error.as_error())
        finally:
            if not self._stopping.is_set():
                path.unlink(missing_ok=True)

    def _write(self, import_id: int, site_id: int, upload: Upload) -> None:
        read = [0]

        def progress(size: int) -> None:
            read[0] += size

        batch: list[dict[str, Any]] = []
        lines = 0
        for figure in upload.figures(progress):
            batch.append(_row(import_id, site_id, figure))
            lines += 1
            if len(batch) >= BATCH:
                self._flush(import_id, batch, read[0], lines, last=False)
                batch = []
        self._flush(import_id, batch, upload.size, lines, last=True)

    def _flush(
        self, import_id: int, batch: list[dict[str, Any]], read: int, lines: int, *, last: bool
    ) -> None:
        if self._stopping.is_set():
            raise StoppedError
        with self.db.begin() as conn:
            values: dict[str, Any] = {"read_bytes": read, "rows": lines}
            if last:
                values.update(status=service.DONE, finished_at=utcnow())
            changed = conn.execute(update(imports).where(imports.c.id == import_id).values(**values)).rowcount
            if not changed:  # deleted meanwhile: its rows went with it
                raise StoppedError
            if batch:
                conn.execute(insert(imported_figures), batch)

    def _fail(self, import_id: int, error: dict[str, str]) -> None:
        with self.db.begin() as conn:
            conn.execute(delete(imported_figures).where(imported_figures.c.import_id == import_id))
            conn.execute(
                update(imports)
                .where(imports.c.id == import_id)
                .values(status=service.FAILED, error=error, finished_at=utcnow())
            )


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
