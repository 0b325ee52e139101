"""One uploaded chunk: gzip (or plain) JSON ``{"session_id", "visitor_id", "events": [rrweb event]}``.

``decode`` checks it and returns what the index needs (timestamps, full snapshot, page changes)
plus the bytes to store, always gzip: the recorder compresses in the browser with
CompressionStream; a chunk sent while the page unloads may come as plain JSON and is compressed
here. Decompression stops at ``MAX_RAW`` bytes, so a small body cannot expand without bound.
"""

from __future__ import annotations

import gzip
import math
import zlib
from dataclasses import dataclass
from typing import Any

import orjson

from sightline.errors import ApiError

MAX_BODY = 1024 * 1024  # compressed bytes in one request
MAX_RAW = 16 * 1024 * 1024  # decompressed bytes of one chunk
MAX_EVENTS = 50_000
GZIP_MAGIC = b"\x1f\x8b"
FULL_SNAPSHOT = 2
META = 4
CUSTOM = 5


@dataclass(frozen=True)
class Chunk:
    session_id: str
    visitor_id: str
    events: int
    first_ts: int
    last_ts: int
    snapshot: bool
    pages: int
    stored: bytes


def invalid(field: str, message: str) -> ApiError:
    return ApiError(422, "invalid_field", message, field=field)


def inflate(body: bytes) -> bytes:
    """The JSON text of ``body``; 400 ``malformed_gzip`` or 413 ``chunk_too_large``."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        raw = inflater.decompress(body, MAX_RAW)
    except zlib.error:
        raise ApiError(400, "malformed_gzip", "The body is not valid gzip data.") from None
    if inflater.unconsumed_tail:
        message = f"The chunk is larger than {MAX_RAW} bytes once decompressed."
        raise ApiError(413, "chunk_too_large", message)
    if not inflater.eof:
        raise ApiError(400, "malformed_gzip", "The gzip data is cut short.")
    return raw


def decode(body: bytes) -> Chunk:
    compressed = body.startswith(GZIP_MAGIC)
    raw = inflate(body) if compressed else body
    if not compressed and len(raw) > MAX_RAW:
        raise ApiError(413, "chunk_too_large", f"The chunk is larger than {MAX_RAW} bytes.")
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ApiError(400, "malformed_json", "The chunk is not valid JSON.") from None
    if not isinstance(document, dict):
        raise invalid("body", "The chunk is a JSON object.")
    session_id = document.get("session_id")
    if not isinstance(session_id, str) or not 1 <= len(session_id) <= 64 or not session_id.isprintable():
        message = "The field 'session_id' is a string of 1 to 64 printable characters."
        raise invalid("session_id", message)
    visitor_id = document.get("visitor_id")
    if not isinstance(visitor_id, str) or not 1 <= len(visitor_id) <= 200 or not visitor_id.isprintable():
        message = "The field 'visitor_id' is a string of 1 to 200 printable characters."
        raise invalid("visitor_id", message)
    events = document.get("events")
    if not isinstance(events, list) or not 1 <= len(events) <= MAX_EVENTS:
        raise invalid("events", f"The field 'events' is a list of 1 to {MAX_EVENTS} recorder events.")
    first = last = None
    snapshot = False
    pages = 0
    for index, event in enumerate(events):
        kind, ts = _event(event, index)
        first = ts if first is None else min(first, ts)
        last = ts if last is None else max(last, ts)
        if kind == FULL_SNAPSHOT:
            snapshot = True
        elif kind == META or (kind == CUSTOM and _tag(event) == "page"):
            pages += 1
    assert first is not None
    assert last is not None
    stored = body if compressed else gzip.compress(raw, compresslevel=6, mtime=0)
    return Chunk(session_id, visitor_id, len(events), first, last, snapshot, pages, stored)


def _event(event: Any, index: int) -> tuple[int, int]:
    if not isinstance(event, dict):
        raise invalid(f"events.{index}", "Each recorder event is an object.")
    kind = event.get("type")
    if not isinstance(kind, int) or isinstance(kind, bool) or not 0 <= kind <= 100:
        raise invalid(f"events.{index}.type", "The field 'type' is the recorder's event type number.")
    ts = event.get("timestamp")
    if (
        not isinstance(ts, int | float)
        or isinstance(ts, bool)
        or not math.isfinite(ts)
        or not 0 <= ts <= 1e15
    ):
        raise invalid(f"events.{index}.timestamp", "The field 'timestamp' is epoch milliseconds.")
    return kind, int(ts)


def _tag(event: dict[str, Any]) -> Any:
    data = event.get("data")
    return data.get("tag") if isinstance(data, dict) else None


def events_of(stored: bytes) -> list[Any]:
    """The recorder events of a stored chunk (as ``decode`` accepted it)."""
    document = orjson.loads(inflate(stored))
    events = document.get("events") if isinstance(document, dict) else None
    return events if isinstance(events, list) else []
