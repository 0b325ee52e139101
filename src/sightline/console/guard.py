"""The checks every console request passes before a handler runs, in PRODUCT.md's order.

401 no valid session (login and setup aside; an API key counts instead on the routes its scopes
name in ``teams/scopes.py``) -> 403 Origin not byte-equal to the console origin on a
state-changing method (not for a call made with a key alone: no browser sends a key by itself, so
there is no forged request to stop) -> 415 JSON method
without ``application/json`` -> 413 body over 8 KiB, declared or streamed -> 404 (a path id) or
422 (``?site_id=``) when an id is not written canonically or ``site_id`` is repeated (``ids.py``:
the handler receives the very ids checked) -> 403 ``forbidden`` when the member's role, or the key's scopes
or site, may not make the call (``roles.py``). The body is read here, capped, and
replayed to the handler. One route takes a file rather than JSON (``UPLOAD_ROUTES``: an import):
the same checks in the same order, with the file's media types for 415 and ``--import-max-mb``
for 413, and its body is left to the handler to stream (which counts it against the same limit).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from anyio import to_thread
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sightline.accounts.sessions import COOKIE_NAME, resume_session
from sightline.console.ids import Named, named_ids
from sightline.console.roles import KEYS_ONLY, api_routes, authorise, is_key_route, match_route
from sightline.context import Context
from sightline.errors import ApiError, error_response, unavailable_response
from sightline.numbers import ascii_int
from sightline.teams import keys
from sightline.teams.principal import Principal, principal_for

log = logging.getLogger("sightline.console")

MAX_BODY = 8 * 1024
MAX_REMEMBERED = 1000  # sessions remembered for a database outage
REMEMBER_SECONDS = 15 * 60
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
JSON_METHODS = frozenset({"POST", "PUT", "PATCH"})
# Routes a remembered session may still use while the database is unavailable (see ``_resume``).
OUTAGE_ROUTES = frozenset({("GET", "/api/me"), ("GET", "/api/health")})
# (method, path) pairs that work without a session; every other guarded request needs one.
OPEN_ROUTES = frozenset(
    {
        ("POST", "/api/login"),
        ("GET", "/setup"),
        ("POST", "/setup"),
        ("POST", "/api/invitations/lookup"),
        ("POST", "/api/invitations/accept"),
    }
)


# Routes whose body is a file, streamed by the handler: (method, template) -> accepted media types.
UPLOAD_ROUTES = {
    ("POST", "/api/sites/{site_id}/imports"): frozenset(
        {
            b"application/zip",
            b"application/x-zip-compressed",
            b"text/csv",
            b"application/vnd.ms-excel",  # what some systems call a .csv file
            b"application/octet-stream",
        }
    )
}


def is_guarded(path: str) -> bool:
    return path == "/api" or path.startswith("/api/") or path == "/setup"


def session_token(scope: Scope) -> str | None:
    """The session cookie's value; other cookies, however malformed, are ignored.

    Browsers send the most specific cookie first, so of duplicates the first one wins.
    (``http.cookies.SimpleCookie`` dropped the whole header on one malformed cookie of another
    site, signing the owner out, and let the last duplicate win.)
    """
    wanted = COOKIE_NAME.encode()
    for name, value in scope.get("headers", []):
        if name != b"cookie":
            continue
        for pair in bytes(value).split(b";"):
            key, sep, raw = pair.partition(b"=")
            if sep and key.strip() == wanted:
                token = raw.strip().strip(b'"')
                return token.decode("latin-1") if token else None
    return None


def _header(scope: Scope, wanted: bytes) -> bytes | None:
    found = [value for name, value in scope.get("headers", []) if name == wanted]
    if len(found) != 1:
        return None if not found else b"\x00multiple"
    return bytes(found[0])


def is_json_content_type(raw: bytes | None) -> bool:
    if raw is None:
        return False
    media_type = raw.split(b";", 1)[0].strip().lower()
    return media_type == b"application/json"


class BodyTooLargeError(Exception):
    pass


def bearer_token(scope: Scope) -> str | None:
    raw = _header(scope, b"authorization")
    if raw is None or raw[:7].lower() != b"bearer ":
        return None
    return raw[7:].strip().decode("latin-1")


class DatabaseUnavailableError(Exception):
    """The session could not be checked: the database is down and the session was not seen lately."""


class ConsoleGuard:
    def __init__(
        self,
        app: ASGIApp,
        context: Callable[[], Context],
        routes: Callable[[], Sequence[BaseRoute]] = list,
    ) -> None:
        self.app = app
        self.context = context
        self.routes = routes
        self._api_routes: list[APIRoute] | None = None
        # SHA-256 of a session token -> (when it was last found valid, the user row); consulted
        # only while the database cannot be reached.
        self._checked: dict[bytes, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_guarded(scope["path"]):
            await self.app(scope, receive, send)
            return
        ctx = self.context()
        method = scope["method"]
        state: dict[str, Any] = scope.setdefault("state", {})
        token = session_token(scope)
        if self._api_routes is None:
            self._api_routes = [r for r in api_routes(self.routes()) if is_guarded(r.path)]
        route = match_route(self._api_routes, scope)
        # The ids the request names, read once: the role check and the handler see the same ones.
        named = _named(route, scope)
        # A read (GET, HEAD) is authorised in the session's worker-thread call (one hop, not two);
        # its outcome is applied below, in the checks' order.
        checked = False  # authorised already, with ``refusal`` what it raised (None: allowed)
        refusal: Exception | None = None
        try:
            if token and route is not None and method not in STATE_CHANGING:
                user, checked, refusal = await to_thread.run_sync(
                    self._resume_and_check, ctx, token, method, route, named
                )
            else:
                user = await to_thread.run_sync(self._resume, ctx, token) if token else None
        except DatabaseUnavailableError:
            await unavailable_response()(scope, receive, send)
            return
        bearer = bearer_token(scope)
        open_route = (method, scope["path"]) in OPEN_ROUTES
        if user is None and bearer is not None and not open_route:
            try:
                user = await to_thread.run_sync(self._key, ctx, bearer, method, route)
            except Exception as exc:
                await _refusal(ctx, exc)(scope, receive, send)
                return
        if user is None and not open_route:
            await error_response(401, "not_signed_in", "Sign in to use the console.")(scope, receive, send)
            return
        state["user"] = user
        state["session_token"] = token if user is not None else None
        by_key = user is not None and user.key_id is not None
        if (
            method in STATE_CHANGING
            and not by_key
            and _header(scope, b"origin") != ctx.origin.encode("latin-1")
        ):
            await error_response(
                403, "bad_origin", "The request's Origin header is not this console's origin."
            )(scope, receive, send)
            return
        upload = UPLOAD_ROUTES.get((method, route[0])) if route is not None else None
        if upload is not None:
            await self._upload(ctx, user, method, (route, named), upload, scope, receive, send)
            return
        if method in JSON_METHODS and not is_json_content_type(_header(scope, b"content-type")):
            await error_response(
                415, "unsupported_media_type", "Send the body as JSON with Content-Type: application/json."
            )(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and ascii_int(declared, 0, MAX_BODY) is None:
            await _too_large()(scope, receive, send)
            return
        try:
            body = await _read_capped(receive)
        except BodyTooLargeError:
            await _too_large()(scope, receive, send)
            return
        if user is not None and route is not None:
            try:
                if not checked:
                    await to_thread.run_sync(self._authorise, ctx, user, method, route, named)
                elif refusal is not None:
                    raise refusal
            except Exception as exc:
                answer = _refusal(ctx, exc)
                # Who the user is and how the service fares stay visible during an outage.
                if isinstance(exc, ApiError) or (method, scope["path"]) not in OUTAGE_ROUTES:
                    await answer(scope, receive, send)
                    return
        await self.app(scope, _replay(body, receive), send)

    async def _upload(
        self,
        ctx: Context,
        user: Principal | None,
        method: str,
        asked: tuple[Any, Named | ApiError],
        types: frozenset[bytes],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """The 415, 413 and role checks of a route whose body is a file; the body is not read."""
        raw = _header(scope, b"content-type") or b""
        if raw.split(b";", 1)[0].strip().lower() not in types:
            await error_response(
                415,
                "unsupported_media_type",
                "Send the file itself as the body, with Content-Type application/zip or text/csv.",
            )(scope, receive, send)
            return
        limit = int(ctx.settings.import_max_mb) * 2**20
        declared = _header(scope, b"content-length")
        if declared is not None and ascii_int(declared, 0, limit) is None:
            await error_response(
                413,
                "body_too_large",
                f"The file is larger than {ctx.settings.import_max_mb} MiB (--import-max-mb).",
            )(scope, receive, send)
            return
        if user is not None:
            try:
                await to_thread.run_sync(self._authorise, ctx, user, method, *asked)
            except Exception as exc:
                await _refusal(ctx, exc)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _resume(self, ctx: Context, token: str) -> Principal | None:
        """The session's user; while the database cannot be written, read only; while it cannot
        be reached, a session this process checked recently still counts (so the owner can see
        on the Health page what is wrong), any other answers 503."""
        key = hashlib.sha256(token.encode("utf-8", "replace")).digest()
        try:
            if ctx.db.outages.recent() is None:
                with ctx.db.begin() as conn:
                    row = resume_session(conn, token, ctx.lifetimes)
                    user = principal_for(conn, row) if row is not None else None
            else:
                with ctx.db.read() as conn:
                    row = resume_session(conn, token, ctx.lifetimes, write=False)
                    user = principal_for(conn, row) if row is not None else None
        except Exception as exc:
            if ctx.db.note_outage(exc) is None:
                raise
            user = self._resume_without_database(ctx, token, key)
        with self._lock:
            if user is None:
                self._checked.pop(key, None)
            else:
                self._checked[key] = (time.monotonic(), user)
                while len(self._checked) > MAX_REMEMBERED:
                    self._checked.pop(next(iter(self._checked)))
        return user

    def _resume_and_check(
        self, ctx: Context, token: str, method: str, route: tuple[str, Any], named: Named | ApiError
    ) -> tuple[Principal | None, bool, Exception | None]:
        """``_resume``, then ``_authorise`` for the user found: (user, whether it was authorised
        here, what that raised)."""
        user = self._resume(ctx, token)
        if user is None:
            return None, False, None
        try:
            self._authorise(ctx, user, method, route, named)
        except Exception as exc:
            return user, True, exc
        return user, True, None

    def _resume_without_database(self, ctx: Context, token: str, key: bytes) -> Principal | None:
        try:  # a locked SQLite file can still be read
            with ctx.db.read() as conn:
                row = resume_session(conn, token, ctx.lifetimes, write=False)
                return principal_for(conn, row) if row is not None else None
        except Exception as exc:
            if ctx.db.note_outage(exc) is None:
                raise
        with self._lock:
            found = self._checked.get(key)
        limit = min(REMEMBER_SECONDS, ctx.lifetimes.idle.total_seconds())
        if found is not None and time.monotonic() - found[0] < limit:
            principal: Principal = found[1]
            return principal
        log.info("a console request could not be authenticated: the database is unavailable")
        raise DatabaseUnavailableError

    @staticmethod
    def _key(ctx: Context, bearer: str, method: str, route: tuple[str, Any] | None) -> Principal:
        if route is None or not is_key_route(method, route[0]):
            raise ApiError(401, "not_signed_in", KEYS_ONLY)
        with ctx.db.begin() as conn:
            who = keys.authenticate(conn, bearer)
        if who is None:
            raise ApiError(401, "invalid_api_key", "This API key is unknown or was revoked.")
        ctx.key_limit.take(str(who.key_id))
        return who

    @staticmethod
    def _authorise(
        ctx: Context, who: Principal, method: str, route: tuple[str, Any], named: Named | ApiError
    ) -> None:
        if isinstance(named, ApiError):  # an id written another way: refused, for every role
            raise named
        with ctx.db.read() as conn:
            authorise(conn, who, method, route[0], named)


def _named(route: tuple[str, Any] | None, scope: Scope) -> Named | ApiError:
    """The ids the request names (``ids.named_ids``), or the refusal of one written otherwise."""
    try:
        return named_ids(route[1] if route is not None else {}, scope.get("query_string", b""))
    except ApiError as error:
        return error


def _refusal(ctx: Context, exc: Exception) -> Any:
    """The answer to a check that raised: its own for an ``ApiError``, 503 ``database_unavailable``
    while the database cannot be reached or written; anything else is raised again (a 500)."""
    if isinstance(exc, ApiError):
        return exc.response()
    if ctx.db.note_outage(exc) is None:
        raise exc
    return unavailable_response()


def _too_large() -> Any:
    return error_response(413, "body_too_large", f"The request body is larger than {MAX_BODY} bytes.")


async def _read_capped(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise BodyTooLargeError
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
