"""The SDK's HTTP endpoints as plain ASGI apps (no framework work on the hot path).

``POST /i/events`` (+ its ``OPTIONS`` preflight) and ``GET /i/config``. CORS follows PROTOCOL.md:
``Access-Control-Allow-Origin`` echoes the request's Origin only when it matches the site (with
``Vary: Origin``), never with credentials. Answers given before the site is known (413, 400,
422, 404 unknown key) echo it when the Origin belongs to some site, and the config's 403
``origin_not_allowed`` is readable by any origin, so that the SDK can read them and stop instead
of retrying what looks like a network error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl

import orjson
from anyio import to_thread
from starlette.types import Receive, Scope, Send

from sightline.ingest.batch import MAX_BODY
from sightline.ingest.pipeline import RETRY_AFTER_SECONDS, DropError, Job, Pipeline
from sightline.ingest.sources import first_language
from sightline.numbers import ascii_int
from sightline.sites.lookup import SiteInfo, parse_origin
from sightline.surveys.auto_open import AutoOpen

log = logging.getLogger("sightline.ingest")

Headers = list[tuple[bytes, bytes]]

BASE_HEADERS: Headers = [
    (b"content-type", b"application/json"),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"vary", b"Origin"),
]
EXPOSE = (b"access-control-expose-headers", b"Retry-After")
PREFLIGHT_MAX_AGE = b"86400"


class TooLargeError(Exception):
    pass


class ClientGoneError(Exception):
    pass


def request_origin(scope: Scope) -> tuple[str | None, str, int | None]:
    """(Origin, User-Agent, Content-Length) from the headers; Origin falls back to Referer's origin."""
    origin = referer = None
    agent = ""
    length: int | None = None
    for name, value in scope["headers"]:
        if name == b"origin":
            origin = value.decode("latin-1")
        elif name == b"user-agent":
            agent = value.decode("latin-1")
        elif name == b"content-length":
            found = ascii_int(value)
            length = -1 if found is None else found
        elif name == b"referer":
            referer = value.decode("latin-1")
    if origin is None and referer is not None:
        origin = _origin_of_url(referer)
    return origin, agent, length


def _header(scope: Scope, wanted: bytes) -> str | None:
    return next((value.decode("latin-1") for name, value in scope["headers"] if name == wanted), None)


def _origin_of_url(url: str) -> str | None:
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return f"{scheme}://{host}" if parse_origin(f"{scheme}://{host}") else None


async def read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGoneError
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise TooLargeError
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def answer(send: Send, status: int, payload: Any, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = orjson.dumps(payload) if payload is not None else b""
    base = BASE_HEADERS if payload is not None else BASE_HEADERS[1:]
    all_headers = [*base, *headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})


@lru_cache(maxsize=1024)
def _accepted_headers(origin: str | None) -> Headers:
    return [*BASE_HEADERS, *cors(origin)]


async def accepted(send: Send, count: int, batch_id: str, origin: str | None) -> None:
    """The 202 of a stored batch: the hot path's answer, its headers built once per origin."""
    # batch_id matches ^[A-Za-z0-9_-]{16,64}$ (batch.py): nothing in it needs JSON escaping.
    body = b'{"accepted":%d,"batch_id":"%s"}' % (count, batch_id.encode())
    headers = [*_accepted_headers(origin), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def error_payload(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    error = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    return {"error": error}


ANY_ORIGIN: Headers = [(b"access-control-allow-origin", b"*")]


def cors(origin: str | None) -> Headers:
    return [(b"access-control-allow-origin", origin.encode("latin-1")), EXPOSE] if origin else []


class EventsEndpoint:
    """``POST /i/events``: a batch through the pipeline; ``OPTIONS``: the CORS preflight.

    ``client_of`` gives the request's client address (for the place lookup, in memory only).
    """

    def __init__(self, pipeline: Pipeline, client_of: Callable[[Scope], str | None] | None = None) -> None:
        self.pipeline = pipeline
        self.client_of = client_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        if method == "POST":
            await self.post(scope, receive, send)
        elif method == "OPTIONS":
            await self.preflight(scope, send)
        else:
            await answer(
                send,
                405,
                error_payload("method_not_allowed", "This address accepts POST only."),
                [(b"allow", b"POST, OPTIONS")],
            )

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin, agent, length = request_origin(scope)
        job = Job(b"", origin, agent)
        job.language = first_language(_header(scope, b"accept-language"))
        if self.client_of is not None:
            job.address = self.client_of(scope)
        try:
            if length is not None and (length < 0 or length > MAX_BODY):
                raise TooLargeError
            job.body = await read_body(receive, MAX_BODY)
            await self.pipeline.run(job)
        except ClientGoneError:
            return
        except TooLargeError:
            drop = DropError("body_too_large", f"The request body is larger than {MAX_BODY} bytes.")
            self.pipeline.dropped["body_too_large"] += 1
            await self.refuse(send, job, drop)
            return
        except DropError as drop:
            await self.refuse(send, job, drop)
            return
        assert job.batch is not None
        await accepted(send, len(job.batch.events), job.batch.batch_id, origin)

    async def refuse(self, send: Send, job: Job, drop: DropError) -> None:
        allowed = await self.allowed_origin(job)
        if drop.status == 202:  # bots, excluded addresses: the same answer as everyone, nothing stored
            assert job.batch is not None
            payload = {"accepted": len(job.batch.events), "batch_id": job.batch.batch_id}
            await answer(send, 202, payload, cors(allowed))
            return
        headers = cors(allowed)
        if drop.status in (429, 503, 507):
            headers.append((b"retry-after", str(RETRY_AFTER_SECONDS).encode()))
        await answer(send, drop.status, error_payload(drop.code, drop.message, drop.field), headers)

    async def allowed_origin(self, job: Job) -> str | None:
        if job.site is not None:
            return job.origin if job.site.allows_origin(job.origin) else None
        return job.origin if await self.pipeline.origin_known(job.origin) else None

    async def preflight(self, scope: Scope, send: Send) -> None:
        origin, _, _ = request_origin(scope)
        key = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get("key")
        if key:
            site = await self.pipeline.site(key)
            allowed = site is not None and site.allows_origin(origin)
        else:
            allowed = await self.pipeline.origin_known(origin)
        if not allowed or origin is None:
            await answer(
                send,
                403,
                error_payload("origin_not_allowed", "This origin belongs to no site on this server."),
            )
            return
        await answer(
            send,
            204,
            None,
            [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"access-control-allow-methods", b"POST"),
                (b"access-control-allow-headers", b"Content-Type"),
                (b"access-control-max-age", PREFLIGHT_MAX_AGE),
            ],
        )


class ConfigEndpoint:
    """``GET /i/config?key=KEY``: which connections are on for the site, for its own origin only,
    and (when feedback is on) the published surveys that open by themselves."""

    def __init__(self, pipeline: Pipeline, auto_open: AutoOpen | None = None) -> None:
        self.pipeline = pipeline
        self.auto_open = auto_open

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await answer(
                send,
                405,
                error_payload("method_not_allowed", "This address accepts GET only."),
                [(b"allow", b"GET")],
            )
            return
        origin, _, _ = request_origin(scope)
        key = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get("key", "")
        if not key or len(key) > 64:
            allowed = origin if await self.pipeline.origin_known(origin) else None
            message = "Give the site's key: /i/config?key=KEY."
            await answer(send, 422, error_payload("invalid_field", message, "key"), cors(allowed))
            return
        site = await self.pipeline.site(key)
        if site is None:
            allowed = origin if await self.pipeline.origin_known(origin) else None
            await answer(send, 404, error_payload("unknown_site", "No site has this key."), cors(allowed))
            return
        if not site.allows_origin(origin):
            # Readable by any page (no credentials, nothing secret in it): the SDK on a page whose
            # origin the owner did not connect shows "error" and stops, instead of retrying forever.
            message = "This key only works on its site's own origin."
            await answer(send, 403, error_payload("origin_not_allowed", message), ANY_ORIGIN)
            return
        config = site_config(site)
        if config["feedback"] and self.auto_open is not None:
            config["surveys"] = await self._auto_open(site.id)
        await answer(send, 200, config, cors(origin))

    async def _auto_open(self, site_id: int) -> list[dict[str, int]]:
        """The site's auto-open surveys; none when they cannot be read (the rest of the answer
        stands: events, recording and ``feedback(id)`` work without them)."""
        assert self.auto_open is not None
        found = self.auto_open.get(site_id)
        if found is not None:
            return found
        try:
            return await to_thread.run_sync(self.auto_open.load, site_id)
        except Exception:
            log.warning("reading the auto-open surveys of site %s failed", site_id, exc_info=True)
            return []


def site_config(site: SiteInfo) -> dict[str, Any]:
    """What the SDK needs. A cookieless site has no recordings and no surveys: both would have
    to remember something on the device (the visit's recording, the answered surveys)."""
    on = site.collection_enabled
    stores = not site.cookieless
    return {
        "events": "ready" if on else "disabled",
        "recording": {
            "enabled": on and stores and site.recording_enabled,
            "sample_rate": float(site.recording_sample_rate),
        },
        "feedback": on and stores,
        "cookieless": site.cookieless,
        "capture": list(site.capture) if on else [],
        "file_download_extensions": list(site.file_download_extensions),
    }
