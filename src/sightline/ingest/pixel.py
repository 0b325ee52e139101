"""``GET /i/pixel.gif``: a pageview without JavaScript, for ``<noscript>``, e-mails and pages
that cannot run the SDK.

``?key=SITE_KEY&path=/x`` counts one pageview of ``path`` with the request's ``Referer`` as the
referrer (the site's own pages are no source) unless ``referrer=`` names one; without ``path``,
the page counted is the ``Referer`` (the page that showed the image) and the referrer is only what
``referrer=`` names. Its ``User-Agent`` gives browser and device, its address the place (never
stored). The visitor is counted as a cookieless site counts them:
from a daily salt, the address and the user agent, nothing kept on the device. The batch goes
through the same pipeline as the SDK's (bots, spam, exclusions, floods, durability) but for the
Origin check, which an image request cannot pass. The answer is always the same 1x1 transparent
GIF with ``no-store``, whatever happened: a page shows no broken image, and a caller learns
nothing from it.
"""

from __future__ import annotations

import base64
import logging
import secrets
import time
from collections.abc import Callable
from urllib.parse import parse_qsl, urlsplit

import orjson
from starlette.types import Receive, Scope, Send

from sightline.ingest.pipeline import DropError, Job, Pipeline
from sightline.visitors.codes import ANONYMOUS

log = logging.getLogger("sightline.ingest")

GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
HEADERS = [
    (b"content-type", b"image/gif"),
    (b"content-length", str(len(GIF)).encode()),
    (b"cache-control", b"no-store, max-age=0"),
    (b"x-content-type-options", b"nosniff"),
    (b"access-control-allow-origin", b"*"),
]
MAX_PARAM = 2000


class PixelEndpoint:
    def __init__(self, pipeline: Pipeline, client_of: Callable[[Scope], str | None]) -> None:
        self.pipeline = pipeline
        self.client_of = client_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        if method == "GET":
            try:
                await self.count(scope)
            except DropError:
                pass  # counted by the pipeline under its reason
            except Exception:
                log.exception("ingest: a pixel request could not be counted")
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        await send({"type": "http.response.body", "body": GIF if method != "HEAD" else b""})

    async def count(self, scope: Scope) -> None:
        query = scope.get("query_string", b"").decode("latin-1")
        params = dict(parse_qsl(query, keep_blank_values=True))
        key = params.get("key")
        if not key or any(len(value) > MAX_PARAM for value in params.values()):
            return  # nothing to count, or a value longer than any the protocol accepts
        referer = agent = ""
        for name, value in scope["headers"]:
            if name == b"referer":
                referer = value.decode("latin-1")[:MAX_PARAM]
            elif name == b"user-agent":
                agent = value.decode("latin-1")
        # Without ``path`` the Referer is the page that showed the image (an <img> sends its page):
        # that page is counted, and it is no referrer. With ``path``, the Referer is the referrer.
        page = params.get("path")
        path = page or _path_of(referer) or "/"
        event = {
            "name": "pageview",
            "visitor_id": ANONYMOUS,
            "session_id": ANONYMOUS,
            "path": path if path.startswith("/") else "/" + path,
            "url": "" if page else referer,
            "referrer": params.get("referrer", referer if page else ""),
            "ts": time.time() * 1000,
        }
        body = {"key": key, "batch_id": secrets.token_urlsafe(18), "events": [event]}
        job = Job(orjson.dumps(body), None, agent, pixel=True)
        job.address = self.client_of(scope)
        await self.pipeline.run(job)


def _path_of(url: str) -> str | None:
    try:
        return urlsplit(url).path or None
    except ValueError:
        return None
