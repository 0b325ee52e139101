"""Recordings as one object: accepting chunks (idempotent, capped), listing, reading, streaming, deleting.

``accept`` answers only after the chunk's bytes are durable in the store and its index row is
committed. Chunks of one recording are accepted one at a time (striped locks in the process and,
on PostgreSQL, the recording's advisory lock for the transaction, which holds across nodes), so a
retried chunk racing its first attempt on another node is stored once, the size cap is never
overshot, and undoing a failed attempt never removes the chunk another node just acknowledged.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import msgspec
import orjson
from sqlalchemy import Connection, and_, delete, func, insert, select, text, update

from sightline.database import Database
from sightline.database.tables.recordings import recording_chunks, recordings
from sightline.database.tables.sites import sites
from sightline.database.types import utcnow
from sightline.errors import ApiError, not_found
from sightline.numbers import ascii_int
from sightline.recordings.chunks import Chunk, events_json
from sightline.recordings.store import ChunkMissingError, ChunkStore, StorageUnavailableError

log = logging.getLogger("sightline.recordings")

PAGE_SIZE = 50
MAX_OFFSET = 100_000
LOCK_STRIPES = 64
MAX_START_SHIFT_MS = 3_600_000
# The first key of the recordings' advisory locks (the second is the recording id's CRC-32).
LOCK_SPACE = int.from_bytes(hashlib.sha256(b"sightline:recordings").digest()[:4], "big", signed=True)


@dataclass(frozen=True)
class Client:
    """The browser and device type (desktop, mobile, tablet) a recording's chunks came from."""

    browser: str | None = None
    device: str | None = None


@dataclass(frozen=True)
class Accepted:
    stored: bool
    snapshot: bool
    size_bytes: int


@dataclass(frozen=True)
class Failure:
    at: float
    kind: str
    problem: str
    fix: str


class Failures:
    """The store's latest failed write, for health (cleared by the next write that succeeds)."""

    def __init__(self) -> None:
        self.last: Failure | None = None
        self.since: float | None = None  # the first failure of the current run

    def note(self, error: OSError) -> None:
        now = time.time()
        if isinstance(error, StorageUnavailableError):
            self.last = Failure(now, error.kind, error.problem, error.fix)
        else:
            problem = (
                f"{error.strerror or type(error).__name__} ({error.filename or 'the recordings directory'})."
            )
            fix = "Check the recordings directory: mounted, writable, and with free space."
            self.last = Failure(now, "write_failed", problem, fix)
        self.since = self.since or now

    def clear(self) -> None:
        if self.last is not None:
            self.last = self.since = None

    def recent(self, seconds: float) -> Failure | None:
        last = self.last
        return last if last is not None and last.at > time.time() - seconds else None


def serialise(conn: Connection, recording_ids: list[str]) -> None:
    """On PostgreSQL, hold each recording's advisory lock until ``conn``'s transaction ends, so the
    nodes sharing the database change one recording one at a time (in key order: no deadlock)."""
    if conn.dialect.name != "postgresql":
        return  # SQLite: one node, whose striped locks suffice
    keys = sorted({zlib.crc32(r.encode()) for r in recording_ids})
    for key in keys:
        signed = key - (1 << 32) if key >= 1 << 31 else key
        conn.execute(text("SELECT pg_advisory_xact_lock(:space, :key)"), {"space": LOCK_SPACE, "key": signed})


class Recordings:
    def __init__(self, db: Database, store: ChunkStore, max_bytes: int) -> None:
        self.db = db
        self.store = store
        self.max_bytes = max_bytes
        self.failures = Failures()
        self._locks = [threading.Lock() for _ in range(LOCK_STRIPES)]
        self.drop_counts: Counter[str] = Counter()  # refused chunks by error code (ingest counts)
        self.stored_counts: Counter[str] = Counter()  # "chunks", "bytes" stored (ingest counts)

    def _lock(self, recording_id: str) -> threading.Lock:
        return self._locks[zlib.crc32(recording_id.encode()) % LOCK_STRIPES]

    def accept(
        self, site_id: int, recording_id: str, seq: int, chunk: Chunk, client: Client | None = None
    ) -> Accepted:
        """Store chunk ``seq`` of the recording once; a repeat answers as the first time did.
        ``client`` is the uploading browser as ingest recognised it (shown in the list)."""
        with self._lock(recording_id):
            written = False
            try:
                with self.db.begin() as conn:
                    serialise(conn, [recording_id])
                    row = conn.execute(select(recordings).where(recordings.c.id == recording_id)).first()
                    if row is not None and row.site_id != site_id:
                        message = "This recording id belongs to another site; start a new recording."
                        raise ApiError(409, "recording_conflict", message)
                    seen = conn.execute(
                        select(recording_chunks.c.seq).where(
                            recording_chunks.c.recording_id == recording_id,
                            recording_chunks.c.seq == seq,
                        )
                    ).first()
                    if row is not None and seen is not None:
                        return Accepted(False, bool(row.has_snapshot), int(row.size_bytes))
                    size = len(chunk.stored)
                    total = (int(row.size_bytes) if row is not None else 0) + size
                    if total > self.max_bytes:
                        message = f"The recording has reached its size limit of {self.max_bytes} bytes."
                        raise ApiError(413, "recording_too_large", message)
                    self._put(recording_id, seq, chunk.stored)
                    written = True
                    snapshot = self._index(conn, row, site_id, recording_id, seq, chunk, client or Client())
            except BaseException:
                if written:
                    self._forget(recording_id, seq)
                raise
        return Accepted(True, snapshot, total)

    def _put(self, recording_id: str, seq: int, data: bytes) -> None:
        try:
            self.store.put(recording_id, seq, data)
        except OSError as error:
            self.failures.note(error)
            raise
        self.failures.clear()

    def _index(
        self,
        conn: Connection,
        row: Any,
        site_id: int,
        recording_id: str,
        seq: int,
        chunk: Chunk,
        client: Client,
    ) -> bool:
        now = utcnow()
        size = len(chunk.stored)
        if row is None:
            span = min(max(chunk.last_ts - chunk.first_ts, 0), MAX_START_SHIFT_MS)
            conn.execute(
                insert(recordings).values(
                    id=recording_id,
                    site_id=site_id,
                    session_id=chunk.session_id,
                    visitor_id=chunk.visitor_id,
                    started_at=now - timedelta(milliseconds=span),
                    updated_at=now,
                    first_ts=chunk.first_ts,
                    last_ts=chunk.last_ts,
                    pages=chunk.pages,
                    chunks=1,
                    size_bytes=size,
                    has_snapshot=chunk.snapshot,
                    entry_page=chunk.entry,
                    browser=client.browser,
                    device=client.device,
                )
            )
            snapshot = chunk.snapshot
        else:
            snapshot = bool(row.has_snapshot) or chunk.snapshot
            # Chunks may arrive out of order: the entry page is the one of the earliest page seen.
            earlier = chunk.entry is not None and (row.entry_page is None or chunk.first_ts < row.first_ts)
            conn.execute(
                update(recordings)
                .where(recordings.c.id == recording_id)
                .values(
                    entry_page=chunk.entry if earlier else row.entry_page,
                    browser=row.browser or client.browser,
                    device=row.device or client.device,
                    updated_at=now,
                    first_ts=min(row.first_ts, chunk.first_ts),
                    last_ts=max(row.last_ts, chunk.last_ts),
                    pages=recordings.c.pages + chunk.pages,
                    chunks=recordings.c.chunks + 1,
                    size_bytes=recordings.c.size_bytes + size,
                    has_snapshot=snapshot,
                )
            )
        conn.execute(
            insert(recording_chunks).values(
                recording_id=recording_id,
                seq=seq,
                size_bytes=size,
                events=chunk.events,
                first_ts=chunk.first_ts,
                last_ts=chunk.last_ts,
                stored_at=now,
            )
        )
        return snapshot

    def _forget(self, recording_id: str, seq: int) -> None:
        """Undo the ``put`` of a chunk whose index rows were not committed.

        Only that one chunk, and only when no committed row points at it: the recording's other
        chunks, and this one when another request indexed it meanwhile, are acknowledged data.
        """
        try:
            with self.db.begin() as conn:
                serialise(conn, [recording_id])  # another node may be indexing this very chunk
                indexed = conn.execute(
                    select(recording_chunks.c.seq).where(
                        recording_chunks.c.recording_id == recording_id, recording_chunks.c.seq == seq
                    )
                ).first()
                if indexed is None:
                    self.store.delete_chunk(recording_id, seq)
        except OSError:
            log.exception("removing the unindexed chunk %s/%s failed", recording_id, seq)
        except Exception:
            log.warning("kept chunk %s/%s: the index could not be read to check it", recording_id, seq)

    # Owner side ------------------------------------------------------------------------------

    def list_for_site(self, conn: Connection, site_id: int, offset: int) -> list[dict[str, Any]]:
        query = (
            select(recordings)
            .where(recordings.c.site_id == site_id, recordings.c.has_snapshot.is_(True))
            .order_by(recordings.c.started_at.desc(), recordings.c.id.desc())
            .limit(PAGE_SIZE)
            .offset(offset)
        )
        return [public(row) for row in conn.execute(query)]

    def get(self, conn: Connection, owner_id: int, recording_id: str) -> Any:
        query = (
            select(recordings)
            .join(sites, sites.c.id == recordings.c.site_id)
            .where(
                and_(
                    recordings.c.id == recording_id,
                    sites.c.owner_id == owner_id,
                    recordings.c.has_snapshot.is_(True),
                )
            )
        )
        row = conn.execute(query).first()
        if row is None:
            raise not_found("recording")
        return row

    def chunk_seqs(self, conn: Connection, recording_id: str) -> list[int]:
        query = (
            select(recording_chunks.c.seq)
            .where(recording_chunks.c.recording_id == recording_id)
            .order_by(recording_chunks.c.seq)
        )
        return [int(seq) for seq in conn.execute(query).scalars()]

    def stream_events(self, recording_id: str, seqs: list[int]) -> Iterator[bytes]:
        """``{"events": [...]}``: every chunk's events in seq order, one chunk in memory at a time.

        The first chunk is read before anything is sent: a store that cannot be reached answers
        503 (``StorageUnavailableError`` from this call, not from the stream). A store lost in the
        middle ends the stream cut short, which the player reports, rather than a gap in it.
        """
        first_body = self._events_of(recording_id, seqs[0]) if seqs else b""
        return self._stream(recording_id, seqs, first_body)

    def _events_of(self, recording_id: str, seq: int) -> bytes:
        try:
            return events_json(self.store.get(recording_id, seq))
        except (ChunkMissingError, ApiError, msgspec.MsgspecError, RecursionError):
            log.error("chunk %s/%s is missing or unreadable; replaying without it", recording_id, seq)
            return b""

    def _stream(self, recording_id: str, seqs: list[int], first_body: bytes) -> Iterator[bytes]:
        yield b'{"recording_id":' + orjson.dumps(recording_id) + b',"events":['
        first = True
        for index, seq in enumerate(seqs):
            body = first_body if index == 0 else self._events_of(recording_id, seq)
            if not body:
                continue
            yield body if first else b"," + body
            first = False
        yield b"]}"

    def delete(self, recording_ids: list[str]) -> None:
        """Remove index rows first (nothing then points at the files), then the files."""
        if not recording_ids:
            return
        with self._both_locks(recording_ids), self.db.begin() as conn:
            serialise(conn, recording_ids)
            conn.execute(delete(recording_chunks).where(recording_chunks.c.recording_id.in_(recording_ids)))
            conn.execute(delete(recordings).where(recordings.c.id.in_(recording_ids)))
        for recording_id in recording_ids:
            try:
                self.store.delete_recording(recording_id)
            except OSError:
                log.exception("deleting the files of recording %s failed", recording_id)

    def ids_for_site(self, conn: Connection, site_id: int) -> list[str]:
        """Every recording id of one site, finished or not (for deleting the site's files)."""
        return [
            str(r)
            for r in conn.execute(select(recordings.c.id).where(recordings.c.site_id == site_id)).scalars()
        ]

    def delete_files(self, recording_ids: list[str]) -> None:
        """Remove the files of recordings whose index rows are already gone (a deleted site's)."""
        for recording_id in recording_ids:
            with self._both_locks([recording_id]):
                try:
                    self.store.delete_recording(recording_id)
                except OSError:
                    log.exception("deleting the files of recording %s failed", recording_id)

    def _both_locks(self, recording_ids: list[str]) -> _Locks:
        stripes = sorted({zlib.crc32(r.encode()) % LOCK_STRIPES for r in recording_ids})
        return _Locks([self._locks[i] for i in stripes])

    def totals(self) -> tuple[int, int]:
        """(recordings, bytes stored) over every site."""
        with self.db.read() as conn:
            count, size = conn.execute(
                select(func.count(), func.coalesce(func.sum(recordings.c.size_bytes), 0))
            ).one()
        return int(count), int(size)


class _Locks:
    def __init__(self, locks: list[threading.Lock]) -> None:
        self.locks = locks

    def __enter__(self) -> None:
        for lock in self.locks:
            lock.acquire()

    def __exit__(self, *exc: object) -> None:
        for lock in reversed(self.locks):
            lock.release()


def duration_ms(row: Any) -> int:
    if row.first_ts is None or row.last_ts is None:
        return 0
    return max(int(row.last_ts) - int(row.first_ts), 0)


def public(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "session_id": row.session_id,
        "visitor_id": row.visitor_id,
        "started_at": row.started_at.isoformat(),
        "duration_ms": duration_ms(row),
        "pages": int(row.pages),
        "size_bytes": int(row.size_bytes),
        "entry_page": row.entry_page,
        "browser": row.browser,
        "device": row.device,
    }


def details(row: Any) -> dict[str, Any]:
    return {
        **public(row),
        "site_id": int(row.site_id),
        "chunks": int(row.chunks),
        "updated_at": row.updated_at.isoformat(),
    }


def parse_offset(raw: str | None) -> int:
    if raw is None or raw == "":
        return 0
    value = ascii_int(raw, 0, MAX_OFFSET)
    if value is None:
        message = f"The field 'offset' is a whole number from 0 to {MAX_OFFSET}."
        raise ApiError(422, "invalid_field", message, field="offset")
    return value
