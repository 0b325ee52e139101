"""``/mcp``: the tools over MCP's streamable HTTP transport, for a Bearer API key.

The key is checked first (401 in the error shape without one, or with an unknown or revoked
one; 403 ``forbidden`` for a key without ``stats:read``); then the SDK's transport answers,
stateless and in JSON. Each tool reads the stats API of this same application in process
(``httpx.ASGITransport``) with the caller's key, so the console's guard applies to every call
exactly as to the stats API: the key's sites, scopes (``list_sites`` needs ``sites:read``) and
rate limit.

The MCP SDK is imported, and its transport started, at the first call to ``/mcp`` (in a thread,
then in a task the server's lifespan owns): it is the costliest import of the server, and most
servers are never asked by an assistant, so a start does not pay for it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import anyio
from anyio import to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from sightline.database import Database
from sightline.errors import error_response
from sightline.teams import keys
from sightline.teams.principal import Principal
from sightline.teams.scopes import STATS_READ, lacking

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from sightline.assistants.stats import StatsApi

log = logging.getLogger("sightline.assistants")

PATH = "/mcp"
MAX_BODY = 8 * 1024  # a tool call is far smaller; the server's body limit (web/bodies.py) is the same
_caller: ContextVar[StatsApi] = ContextVar("sightline_mcp_caller")


class McpEndpoint:
    """The ASGI app of ``/mcp``. ``app`` is the whole application the tools read through."""

    def __init__(self, db: Callable[[], Database], app: Callable[[], ASGIApp]) -> None:
        self.db = db
        self.app = app
        self.transport: ASGIApp | None = None  # set once the transport runs
        self.failure: str | None = None  # why it could not start
        self._asked = anyio.Event()
        self._ready = anyio.Event()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the server's lifetime: a task that starts the transport when ``/mcp`` is first called
        and runs its task group until the server stops."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._serve_when_asked)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def _serve_when_asked(self) -> None:
        await self._asked.wait()
        try:
            server, transport = await to_thread.run_sync(_build)
            async with server.session_manager.run():
                self.transport = transport
                self._ready.set()
                await anyio.sleep_forever()
        except Exception as exc:  # the SDK could not start: every call answers 503 saying so
            log.exception("the MCP transport could not start")
            self.failure = f"{type(exc).__name__}: {exc}"
            self._ready.set()

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
        import httpx  # here: a server that is never asked over MCP does without it

        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app()),
            base_url="http://sightline.internal",
            headers={"Authorization": f"Bearer {bearer}"},
            timeout=120,
        )
        self._asked.set()
        await self._ready.wait()
        if self.transport is None:
            await client.aclose()
            await error_response(
                503,
                "assistants_unavailable",
                f"The MCP transport could not start ({self.failure}); the server's log has the cause "
                "under the logger sightline.assistants.",
            )(scope, receive, send)
            return
        from sightline.assistants.stats import StatsApi  # imported with the SDK by _build

        token = _caller.set(StatsApi(client))
        try:
            await self.transport(scope, receive, send)
        finally:
            _caller.reset(token)
            await client.aclose()

    def _known(self, bearer: str) -> Principal | None:
        with self.db().begin() as conn:
            return keys.authenticate(conn, bearer)


def _build() -> tuple[MCPServer, ASGIApp]:
    """The MCP server of the tools and its streamable HTTP transport (imports the SDK)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from sightline.assistants import tools

    server = tools.build(_caller.get)
    # A key, not a cookie, opens this endpoint: a page on another origin cannot use it for
    # someone, so the SDK's DNS-rebinding check (for servers on localhost) is not needed.
    transport = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        max_request_body_size=MAX_BODY,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return server, transport


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
