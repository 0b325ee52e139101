"""A cap on every request body that neither the console's guard nor ingest reads itself.

The console API's bodies are read by ``console.guard`` (8 KiB, or ``--import-max-mb`` for an
import's file) and the SDK's by ingest (each endpoint its own limit), before anything else sees
them. Every other path (a shared dashboard's unlock, the unsubscribe pages, any route added
later) is served through ``BodyLimit``: the body is counted while it is read, and past ``limit``
bytes the read fails with 413 ``body_too_large``, so no request, signed in or not, can make the
server hold more than that of its body, whatever its ``Content-Length`` says or however long its
chunked body runs.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(HTTPException):
    """Raised by the capped ``receive``; answered 413 ``body_too_large`` (``console.errors``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body is larger than {limit} bytes.")


class BodyLimit:
    """Counts each request's body as it is received; ``skip(path)`` names the paths whose readers
    apply their own limits."""

    def __init__(self, app: ASGIApp, limit: int, skip: Callable[[str], bool] = lambda _: False) -> None:
        self.app = app
        self.limit = limit
        self.skip = skip

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.skip(scope["path"]):
            await self.app(scope, receive, send)
            return
        await self.app(scope, capped(receive, self.limit), send)


def capped(receive: Receive, limit: int) -> Receive:
    """``receive``, raising ``BodyTooLarge`` once more than ``limit`` body bytes have come."""
    size = 0

    async def counted() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise BodyTooLarge(limit)
        return message

    return counted
