"""``GET /analytics.js`` and its lazily loaded siblings ``/analytics-<name>.js``.

Served from the SDK's build directory with a strong ETag (304 on If-None-Match), gzip when the
client accepts it (compressed once per file version, then kept in memory), a five-minute public
cache lifetime, and CORS open to every origin: the script is public.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from anyio import to_thread
from starlette.types import Receive, Scope, Send

from sightline.ingest.http import answer, error_payload

NAME = re.compile(r"\A/analytics(?:-([a-z0-9-]+))?\.js\Z")
CACHE_CONTROL = b"public, max-age=300"
COMMON_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/javascript; charset=utf-8"),
    (b"cache-control", CACHE_CONTROL),
    (b"access-control-allow-origin", b"*"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-resource-policy", b"cross-origin"),
    (b"vary", b"Accept-Encoding"),
]


def is_script_path(path: str) -> bool:
    return NAME.match(path) is not None


@dataclass(frozen=True)
class Script:
    stamp: tuple[int, int]  # (mtime_ns, size) of the file it was read from
    body: bytes
    gzipped: bytes
    etag: bytes


class ScriptFiles:
    """The built SDK files of one directory, read and compressed once per version."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: dict[str, Script] = {}
        self._lock = threading.Lock()

    def fresh(self, filename: str) -> Script | None:
        """The cached script when the file has not changed since it was read (one stat call)."""
        cached = self._cache.get(filename)
        if cached is None:
            return None
        try:
            info = (self.directory / filename).stat()
        except OSError:
            return None
        return cached if (info.st_mtime_ns, info.st_size) == cached.stamp else None

    def get(self, filename: str) -> Script | None:
        """Read (and compress) the file when it changed; blocking, so call it from a thread."""
        path = self.directory / filename
        try:
            info = path.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        cached = self._cache.get(filename)
        if cached is not None and cached.stamp == stamp:
            return cached
        try:
            body = path.read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(body).hexdigest()[:32]
        script = Script(stamp, body, gzip.compress(body, 9, mtime=0), f'"{digest}"'.encode())
        with self._lock:
            self._cache[filename] = script
        return script


def accepts_gzip(header: bytes | None) -> bool:
    if not header:
        return False
    for part in header.decode("latin-1").lower().split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip() in ("gzip", "*"):
            quality = params.strip()
            return not (quality.startswith("q=") and _quality(quality[2:]) == 0)
    return False


def _quality(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 1.0


def etag_matches(header: bytes | None, etag: bytes) -> bool:
    if not header:
        return False
    if header.strip() == b"*":
        return True
    tags = [t.strip() for t in header.split(b",")]
    return any((t[2:] if t.startswith(b"W/") else t) == etag for t in tags)


class ScriptEndpoint:
    def __init__(self, files: ScriptFiles) -> None:
        self.files = files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = NAME.match(scope["path"])
        if scope["method"] not in ("GET", "HEAD"):
            await answer(send, 405, error_payload("method_not_allowed", "Scripts are read with GET."))
            return
        if match is None:
            await answer(send, 404, error_payload("not_found", "There is no such script."))
            return
        filename = scope["path"].lstrip("/")
        script = self.files.fresh(filename)
        if script is None:
            script = await to_thread.run_sync(self.files.get, filename)
        if script is None:
            await answer(send, 404, error_payload("not_found", "There is no such script."))
            return
        headers = dict(scope["headers"])
        base = [*COMMON_HEADERS, (b"etag", script.etag)]
        if etag_matches(headers.get(b"if-none-match"), script.etag):
            await send({"type": "http.response.start", "status": 304, "headers": base})
            await send({"type": "http.response.body", "body": b""})
            return
        body = script.body
        if accepts_gzip(headers.get(b"accept-encoding")):
            body = script.gzipped
            base.append((b"content-encoding", b"gzip"))
        base.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": base})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
