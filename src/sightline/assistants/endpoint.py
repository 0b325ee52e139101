"""``/mcp``: the tools over MCP's streamable HTTP transport, for a Bearer API key.

The key is checked first (401 in the error shape without one, or with an unknown or revoked
one; 403 ``forbidden`` for a key without ``stats:read``); then the SDK's transport answers,
stateless and in JSON. Each tool reads the stats API of this same application in process
(``httpx.ASGITransport``) with the caller's key, so the console's guard applies to every call
exactly as to the stats API: the key's sites, scopes (``list_sites`` needs ``sites:read``) and
rate limit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar

import httpx
from anyio import to_thread
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from sightline.assistants import tools
from sightline.assistants.stats import StatsApi
from sightline.database import Database
from sightline.errors import error_response
from sightline.teams import keys
from sightline.teams.principal import Principal
from sightline.teams.scopes import STATS_READ, lacking

PATH = "/mcp"
MAX_BODY = 8 * 1024  # a tool call is far smaller; the server's body limit (web/bodies.py) is the same
_caller: ContextVar[StatsApi] = ContextVar("sightline_mcp_caller")


class McpEndpoint:
    """The ASGI app of ``/mcp``. ``app`` is the whole application the tools read through."""

    def __init__(self, db: Callable[[], Database], app: Callable[[], ASGIApp]) -> None:
        self.db = db
        self.app = app
        self.server = tools.build(_caller.get)
        # A key, not a cookie, opens this endpoint: a page on another origin cannot use it for
        # someone, so the SDK's DNS-rebinding check (for servers on localhost) is not needed.
        self.transport = self.server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=MAX_BODY,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The transport's task group, for the server's lifetime."""
        async with self.server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        bearer = _bearer(scope)
        if bearer is None:
            await _unauthorised("An API key is needed: send it as Authorization: Bearer KEY.")(
                scope, receive, send
            )
            return
        who = await to_thread.run_sync(self._known, bearer)
        if who is None:
            await _unauthorised("This API key is unknown or was revoked.")(scope, receive, send)
            return
        if STATS_READ not in who.scopes:
            await lacking(STATS_READ).response()(scope, receive, send)
            return
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app()),
            base_url="http://sightline.internal",
            headers={"Authorization": f"Bearer {bearer}"},
            timeout=120,
        )
        token = _caller.set(StatsApi(client))
        try:
            await self.transport(scope, receive, send)
        finally:
            _caller.reset(token)
            await client.aclose()

    def _known(self, bearer: str) -> Principal | None:
        with self.db().begin() as conn:
            return keys.authenticate(conn, bearer)


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            text: str = bytes(value).decode("latin-1")
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def _unauthorised(message: str) -> ASGIApp:
    return error_response(
        401, "invalid_api_key", message, headers={"WWW-Authenticate": 'Bearer realm="sightline"'}
    )
