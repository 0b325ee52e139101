"""Static assets under ``/static`` with caching that fits how the console names them.

The console's shell asks for ``app.js``, ``console.css``, ``theme.js`` and ``setup.js`` with a
``?v=`` version token, and esbuild names the chunks by their content (``chunk-<hash>.js``): such a
URL always means the same bytes, so browsers may keep it for a year without asking again. Every
other console file (the icon, a URL without its token) is revalidated on each use. Files outside
``console/`` keep the plain static-file behaviour.
"""

from __future__ import annotations

import re

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

IMMUTABLE = "public, max-age=31536000, immutable"
CHUNK = re.compile(r"console/chunk-[A-Za-z0-9]+\.js")
VERSION = re.compile(rb"(?:^|&)v=[0-9a-f]+(?:&|$)")


class StaticAssets(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if path.startswith("console/") and response.status_code in (200, 304):
            versioned = CHUNK.fullmatch(path) or VERSION.search(scope.get("query_string", b""))
            response.headers["Cache-Control"] = IMMUTABLE if versioned else "no-cache"
        return response
