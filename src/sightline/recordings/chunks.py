"""One uploaded chunk: gzip (or plain) JSON ``{"session_id", "visitor_id", "events": [rrweb event]}``.

``decode`` checks it and returns what the index needs (timestamps, full snapshot, page changes)
plus the bytes to store, always gzip: the recorder compresses in the browser with
CompressionStream; a chunk sent while the page unloads may come as plain JSON and is compressed
here. Every cost is bounded by the chunk's size, never by what it contains:

- decompression stops at ``MAX_RAW`` bytes (413 ``chunk_too_large``), so a small body cannot
  expand without bound;
- the JSON is decoded by msgspec into typed structs: only the top level and each event's ``type``
  and ``timestamp`` become Python objects; an event's ``data`` (the page's DOM, mutations, ...)
  is checked as JSON and kept as a slice of the text (``msgspec.Raw``), so a chunk of millions
  of empty objects costs no more than its bytes;
- nesting deeper than the decoder's recursion limit (``MAX_DEPTH`` in the decoder process, see
  ``decoder``) is refused with 422 ``chunk_too_deep``; text that is not UTF-8 is 400.

``decode`` runs in the decoder process (``decoder.ChunkDecoder``), never in the server's.
"""

from __future__ import annotations

import codecs
import gzip
import re
import zlib
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

import msgspec

from sightline.errors import ApiError

MAX_BODY = 1024 * 1024  # compressed bytes in one request
MAX_RAW = 8 * 1024 * 1024  # decompressed bytes of one chunk
MAX_EVENTS = 50_000
MAX_DEPTH = 500  # JSON nesting (a page's DOM is rarely 100 elements deep; rrweb doubles that)
GZIP_MAGIC = b"\x1f\x8b"
FULL_SNAPSHOT = 2
META = 4
CUSTOM = 5
MAX_HREF = 8192
MAX_PATH = 2000  # as the events log keeps a page's path
PAGE_TAG = b'"page"'
UTF8_STEP = 1 << 16


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
    # The path of the chunk's earliest page (its first recorder "meta" event), and when it began.
    entry: str | None = None
    entry_ts: int | None = None


class _Event(msgspec.Struct, gc=False):
    type: Annotated[int, msgspec.Meta(ge=0, le=100)]
    timestamp: Annotated[float, msgspec.Meta(ge=0, le=1e15)]
    data: msgspec.Raw = msgspec.Raw(b"null")


class _Document(msgspec.Struct, gc=False):
    session_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    visitor_id: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    events: Annotated[list[_Event], msgspec.Meta(min_length=1, max_length=MAX_EVENTS)]


class _Tagged(msgspec.Struct, gc=False):
    tag: msgspec.Raw = msgspec.Raw(b"null")


class _Meta(msgspec.Struct, gc=False):
    href: str | None = None


class _Stored(msgspec.Struct, gc=False):
    events: msgspec.Raw = msgspec.Raw(b"[]")


_DOCUMENT = msgspec.json.Decoder(_Document)
_TAGGED = msgspec.json.Decoder(_Tagged)
_STORED = msgspec.json.Decoder(_Stored)
_META = msgspec.json.Decoder(_Meta)
_AT = re.compile(r" - at `\$(?P<path>[^`]*)`\Z")
_MISSING = re.compile(r"missing required field `(?P<name>[a-z_]+)`")
_MESSAGES = {
    "body": "The chunk is a JSON object.",
    "session_id": "The field 'session_id' is a string of 1 to 64 printable characters.",
    "visitor_id": "The field 'visitor_id' is a string of 1 to 200 printable characters.",
    "events": f"The field 'events' is a list of 1 to {MAX_EVENTS} recorder events.",
    "event": "Each recorder event is an object.",
    "type": "The field 'type' is the recorder's event type number.",
    "timestamp": "The field 'timestamp' is epoch milliseconds.",
}


def invalid(field: str, message: str) -> ApiError:
    return ApiError(422, "invalid_field", message, field=field)


def inflate(body: bytes) -> bytes:
    """The JSON text of ``body``; 400 ``malformed_gzip`` or 413 ``chunk_too_large``."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        raw = inflater.decompress(body, MAX_RAW)
    except zlib.error:
        raise ApiError(400, "malformed_gzip", "The body is not valid gzip data.") from None
    if inflater.unconsumed_tail or (not inflater.eof and len(raw) == MAX_RAW):
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
    document = _parse(raw)
    for name in ("session_id", "visitor_id"):
        if not getattr(document, name).isprintable():
            raise invalid(name, _MESSAGES[name])
    first = last = None
    snapshot = False
    pages = 0
    entry: tuple[int, str] | None = None
    for event in document.events:
        ts = int(event.timestamp)
        first = ts if first is None else min(first, ts)
        last = ts if last is None else max(last, ts)
        if event.type == FULL_SNAPSHOT:
            snapshot = True
        elif event.type == META or (event.type == CUSTOM and _is_page(event.data)):
            pages += 1
            if event.type == META and (entry is None or ts < entry[0]):
                path = _path(event.data)
                entry = (ts, path) if path is not None else entry
    assert first is not None
    assert last is not None
    stored = body if compressed else gzip.compress(raw, compresslevel=6, mtime=0)
    return Chunk(
        document.session_id,
        document.visitor_id,
        len(document.events),
        first,
        last,
        snapshot,
        pages,
        stored,
        entry=entry[1] if entry else None,
        entry_ts=entry[0] if entry else None,
    )


def _parse(raw: bytes) -> _Document:
    _check_utf8(raw)
    try:
        return _DOCUMENT.decode(raw)
    except msgspec.ValidationError as exc:
        raise _refusal(str(exc)) from None
    except msgspec.DecodeError:
        raise ApiError(400, "malformed_json", "The chunk is not valid JSON.") from None
    except RecursionError:
        message = f"The chunk nests JSON more than {MAX_DEPTH} levels deep."
        raise ApiError(422, "chunk_too_deep", message) from None


def _check_utf8(raw: bytes) -> None:
    """400 unless ``raw`` is UTF-8 (msgspec does not check the text it keeps as ``Raw``)."""
    if raw.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    try:
        for start in range(0, len(view), UTF8_STEP):
            decoder.decode(view[start : start + UTF8_STEP])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ApiError(400, "malformed_json", "The chunk is not UTF-8 text.") from None


def _refusal(detail: str) -> ApiError:
    """The field at fault in msgspec's ``Expected ... - at `$.events[3].type``` as ``events.3.type``."""
    at = _AT.search(detail)
    path = at.group("path") if at else ""
    missing = _MISSING.search(detail)
    if missing:
        path += "." + missing.group("name")
    field = re.sub(r"\[(\d+)\]", r".\1", path).strip(".") or "body"
    last = field.rsplit(".", 1)[-1]
    key = "event" if last.isdigit() else last
    return invalid(field, _MESSAGES.get(key, _MESSAGES["body"]))


def _path(data: msgspec.Raw) -> str | None:
    """The path of a meta event's page address (no query or fragment: they may carry personal
    data), or None when it has no usable http(s) address."""
    try:
        href = _META.decode(data).href
    except msgspec.MsgspecError:
        return None
    if not isinstance(href, str) or len(href) > MAX_HREF:
        return None
    try:
        address = urlsplit(href)
    except ValueError:
        return None
    if address.scheme not in ("http", "https"):
        return None
    path = address.path or "/"
    return path[:MAX_PATH] if path.isprintable() else None


def _is_page(data: msgspec.Raw) -> bool:
    try:
        return bytes(_TAGGED.decode(data).tag) == PAGE_TAG
    except msgspec.MsgspecError:
        return False


def events_json(stored: bytes) -> bytes:
    """The recorder events of a stored chunk as JSON text without the array's brackets.

    The events are passed on as the text ``decode`` accepted: nothing is built but the slice.
    """
    events = bytes(_STORED.decode(inflate(stored)).events)
    return events[1:-1].strip() if events.startswith(b"[") else b""
