"""What the endpoints beside ingest's hot path share: the survey widget's (``feedback.py``) and the
recorder's (``recordings.py``).

Each takes a site's key, checks the request's Origin against the site, reads a body with a cap and
answers in the error shape with the CORS headers of ``/i/events`` (PROTOCOL.md). A refusal is a
``RefusedError`` raised anywhere on the way and answered once by the endpoint; an answer given
before the site is known echoes the Origin only when it belongs to some site, as ``http`` does.
"""

from __future__ import annotations

from typing import Any

from starlette.types import Receive, Scope, Send

from sightline.errors import ApiError
from sightline.health.disk import DATABASE
from sightline.ingest.http import EventsEndpoint, TooLargeError, answer, cors, error_payload, read_body
from sightline.ingest.pipeline import DISK_FULL_MESSAGE, RETRY_AFTER_SECONDS, Pipeline
from sightline.sites.lookup import SiteInfo

KEY_MAX = 64


class RefusedError(Exception):
    """An answer other than success; ``allowed`` is the Origin to echo for CORS, if any."""

    def __init__(
        self, status: int, payload: dict[str, Any], allowed: str | None, retry: bool = False
    ) -> None:
        super().__init__(status)
        self.status = status
        self.payload = payload
        self.allowed = allowed
        self.retry = retry

    @classmethod
    def of(cls, exc: ApiError, allowed: str | None, retry: bool = False) -> RefusedError:
        """A feature's ``ApiError`` as the endpoint's refusal."""
        return cls(exc.status, error_payload(exc.code, exc.message, exc.field), allowed, retry)

    @property
    def code(self) -> str:
        code: str = self.payload["error"]["code"]
        return code

    async def send(self, send: Send) -> None:
        headers = cors(self.allowed)
        if self.retry:
            headers.append((b"retry-after", str(RETRY_AFTER_SECONDS).encode()))
        await answer(send, self.status, self.payload, headers)


class SiteEndpoint:
    """An ASGI endpoint that serves one site's visitors by its key, outside the hot path."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.preflight = EventsEndpoint(pipeline).preflight

    async def answered_other_than_post(self, scope: Scope, send: Send) -> bool:
        """Answers ``OPTIONS`` (the CORS preflight) and refuses any method but ``POST``; whether it did."""
        if scope["method"] == "OPTIONS":
            await self.preflight(scope, send)
            return True
        if scope["method"] != "POST":
            payload = error_payload("method_not_allowed", "This address accepts POST only.")
            await answer(send, 405, payload, [(b"allow", b"POST, OPTIONS")])
            return True
        return False

    async def known_origin(self, origin: str | None) -> str | None:
        return origin if await self.pipeline.origin_known(origin) else None

    async def authorise(self, key: object, origin: str | None, *, key_message: str) -> SiteInfo:
        """The site of ``key`` when the request comes from its origin, collection is on and
        ``check_site`` lets it through."""
        if not isinstance(key, str) or not key or len(key) > KEY_MAX:
            payload = error_payload("invalid_field", key_message, "key")
            raise RefusedError(422, payload, await self.known_origin(origin))
        site = await self.pipeline.site(key)
        if site is None:
            payload = error_payload("unknown_site", "No site has this key.")
            raise RefusedError(404, payload, await self.known_origin(origin))
        if not site.allows_origin(origin):
            message = "This key only works on its site's own origin."
            raise RefusedError(403, error_payload("origin_not_allowed", message), None)
        if not site.collection_enabled:
            message = "The site's owner has switched collection off."
            raise RefusedError(403, error_payload("collection_disabled", message), origin)
        self.check_site(site, origin)
        return site

    def check_site(self, site: SiteInfo, origin: str | None) -> None:
        """An endpoint's own condition on the site (raises ``RefusedError``); none by default."""

    def refuse_when_disk_full(self, origin: str | None, *parts: str) -> None:
        """507 while the disk guard refuses writes to the database or any of ``parts``."""
        disk = self.pipeline.disk
        if disk is not None and any(disk.refuses(part) for part in (*parts, DATABASE)):
            payload = error_payload("insufficient_storage", DISK_FULL_MESSAGE)
            raise RefusedError(507, payload, origin, retry=True)

    async def read_capped(
        self, receive: Receive, origin: str | None, length: int | None, limit: int, *, site_known: bool
    ) -> bytes:
        """The body, refused with 413 past ``limit`` bytes (declared or counted); its Origin is
        echoed when the site is known already, else when it belongs to some site."""
        try:
            if length is not None and (length < 0 or length > limit):
                raise TooLargeError
            return await read_body(receive, limit)
        except TooLargeError:
            message = f"The request body is larger than {limit} bytes."
            allowed = origin if site_known else await self.known_origin(origin)
            raise RefusedError(413, error_payload("body_too_large", message), allowed) from None
