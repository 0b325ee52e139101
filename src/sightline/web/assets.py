"""Static assets under ``/static`` with caching that fits how the console names them, gzip-encoded
when the browser accepts it.

The console's shell asks for ``app.js``, ``console.css``, ``theme.js`` and ``setup.js`` with a
``?v=`` version token, and esbuild names the chunks by their content (``chunk-<hash>.js``): such a
URL always means the same bytes, so browsers may keep it for a year without asking again. Every
other console file (the icon, a URL without its token) is revalidated on each use. Files outside
``console/`` keep the plain static-file behaviour.

Compression happens once, at build time: ``ui/build.mjs`` writes ``<name>.gz`` (gzip -9) next to
each text file it emits. A request whose ``Accept-Encoding`` allows gzip gets that file's bytes
with ``Content-Encoding: gzip`` (its own length and ETag, so a 304 revalidates the variant the
browser holds); any other request gets the plain file. Both carry ``Vary: Accept-Encoding``. A
``.gz`` older than its source (a file rebuilt without it) is ignored. Brotli would save a little
more but needs a library this project does not depend on.
"""

from __future__ import annotations

import mimetypes
import os
import re
import stat
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import Scope

IMMUTABLE = "public, max-age=31536000, immutable"
CHUNK = re.compile(r"console/chunk-[A-Za-z0-9]+\.js")
VERSION = re.compile(rb"(?:^|&)v=[0-9a-f]+(?:&|\Z)")
VARY = "Accept-Encoding"


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` value allows gzip (RFC 9110 12.5.3: ``gzip;q=0`` refuses it,
    ``*`` covers it unless gzip is named)."""
    wildcard = False
    for item in accept_encoding.split(","):
        name, _, params = item.partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value.strip())
                except ValueError:
                    quality = 0.0
        coding = name.strip().lower()
        if coding in ("gzip", "x-gzip"):
            return quality > 0
        if coding == "*":
            wildcard = quality > 0
    return wildcard


def precompressed(full_path: str, source: os.stat_result) -> tuple[str, os.stat_result] | None:
    """The build's ``.gz`` of ``full_path``, if there is one at least as new as the file itself."""
    path = full_path + ".gz"
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode) or found.st_mtime_ns < source.st_mtime_ns:
        return None
    return path, found


class StaticAssets(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if path.startswith("console/") and response.status_code in (200, 304):
            versioned = CHUNK.fullmatch(path) or VERSION.search(scope.get("query_string", b""))
            response.headers["Cache-Control"] = IMMUTABLE if versioned else "no-cache"
        return response

    def file_response(
        self,
        full_path: Any,
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        encoded = precompressed(str(full_path), stat_result) if status_code == 200 else None
        if encoded is None:
            return super().file_response(full_path, stat_result, scope, status_code)
        request_headers = Headers(scope=scope)
        if accepts_gzip(request_headers.get("accept-encoding", "")):
            media_type = mimetypes.guess_type(str(full_path))[0] or "application/octet-stream"
            response: Response = FileResponse(
                encoded[0],
                stat_result=encoded[1],
                media_type=media_type,
                headers={"Content-Encoding": "gzip", "Vary": VARY},
            )
        else:
            response = FileResponse(full_path, stat_result=stat_result, headers={"Vary": VARY})
        if self.is_not_modified(response.headers, request_headers):
            return NotModifiedResponse(response.headers)
        return response
