"""Shared dashboards: the console's API for read-only links (``/api/sites/{id}/shares``,
``/api/shares/{id}``), and what a link's visitor calls without a session under ``/share/{token}``.

The visitor's report calls are the console's own report routes: ``SharedReports`` checks the link
(404 once deleted), its rate limit and its password, then hands the request to the router as
``GET /api/sites/{site_id}/reports/{kind}`` on behalf of a reader of that one site. So the shared
dashboard answers exactly what the console's dashboard does, and nothing but reports.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from anyio import to_thread
from fastapi import APIRouter, Path, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import Field, ValidationError
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from sightline.console.deps import context, member
from sightline.console.guard import MAX_BODY, is_json_content_type
from sightline.console.ids import ShareId, SiteId
from sightline.console.schemas import Body, Text
from sightline.context import Context
from sightline.errors import ApiError, error_response
from sightline.numbers import ascii_int
from sightline.teams import shares
from sightline.teams.principal import Principal

router = APIRouter(tags=["sharing"])
public = APIRouter(prefix="/share/{token}/api", include_in_schema=False)

Token = Annotated[str, Path(max_length=64)]
# A report (summary, breakdown, ...) or a report table's CSV (export/breakdown.csv, ...).
KIND = re.compile(r"\A(export/)?[a-z_]{1,40}(\.csv)?\Z")


class ShareCreate(Body):
    password: Annotated[Text, Field(max_length=1024)] | None = None


class Unlock(Body):
    password: Annotated[Text, Field(max_length=1024)]


@router.post(
    "/api/sites/{site_id}/shares",
    summary="Create a read-only link to the site's dashboard",
    status_code=201,
    responses={403: {}, 404: {}, 422: {}},
)
def create_share(site_id: SiteId, request: Request, body: ShareCreate | None = None) -> JSONResponse:
    ctx = context(request)
    who = member(request)
    password = body.password if body is not None else None
    with ctx.db.begin() as conn:
        created = shares.create_share(conn, who.team_id, who.user_id, site_id, password, ctx.origin)
    return JSONResponse(created, status_code=201)


@router.get("/api/sites/{site_id}/shares", summary="The site's shared links", responses={403: {}, 404: {}})
def list_shares(site_id: SiteId, request: Request) -> dict[str, Any]:
    ctx = context(request)
    with ctx.db.read() as conn:
        return {"shares": shares.list_shares(conn, member(request).team_id, site_id, ctx.origin)}


@router.delete(
    "/api/shares/{share_id}",
    summary="Delete a shared link (it answers 404 from then on)",
    status_code=204,
    responses={403: {}, 404: {}},
)
def revoke_share(share_id: ShareId, request: Request) -> Response:
    with context(request).db.begin() as conn:
        shares.revoke_share(conn, member(request).team_id, share_id)
    return Response(status_code=204)


def _gone() -> ApiError:
    return ApiError(404, "not_found", "This shared link does not exist or was deleted.")


def open_share(ctx: Context, token: str) -> Any:
    """The link, counted against its rate limit; 404 when there is none."""
    with ctx.db.read() as conn:
        share = shares.find_share(conn, token)
    if share is None:
        raise _gone()
    ctx.share_limit.take(f"share:{share.id}")
    return share


def _cookie(request_cookies: dict[str, str], share: Any) -> str | None:
    return request_cookies.get(f"{shares.COOKIE_PREFIX}{share.id}")


@public.get("/site")
def shared_site(token: Token, request: Request) -> dict[str, Any]:
    ctx = context(request)
    share = open_share(ctx, token)
    with ctx.db.begin() as conn:
        shares.touch(conn, share.id)
    return {
        "id": share.site_id,
        "name": share.name,
        "domain": share.domain,
        "timezone": share.timezone,
        "password_required": share.password_hash is not None,
        "unlocked": shares.is_unlocked(share, _cookie(request.cookies, share)),
    }


@public.post("/unlock", status_code=204)
async def unlock(token: Token, request: Request) -> Response:
    """The cheap checks (Origin, content type, declared size, the link, its lockout) come before
    the body is read, and the body is read only up to ``MAX_BODY`` (a parameter of type
    ``Unlock`` would have had FastAPI read all of it first, however large)."""
    ctx = context(request)
    if request.headers.get("origin") != ctx.origin:
        raise ApiError(403, "bad_origin", "The request's Origin header is not this console's origin.")
    if not is_json_content_type(request.headers.get("content-type", "").encode("latin-1")):
        raise ApiError(
            415, "unsupported_media_type", "Send the body as JSON with Content-Type: application/json."
        )
    declared = request.headers.get("content-length")
    if declared is not None and ascii_int(declared, 0, MAX_BODY) is None:
        raise _too_large()
    share = await to_thread.run_sync(open_share, ctx, token)
    key = f"share:{share.id}"
    wait = ctx.share_failures.retry_after(key)
    if wait:
        raise ApiError(
            429,
            "too_many_attempts",
            "Too many wrong passwords for this link; try again later.",
            headers={"Retry-After": str(wait)},
        )
    body = _unlock_body(await _read_capped(request))
    if not await to_thread.run_sync(shares.password_matches, share, body.password):
        ctx.share_failures.fail(key)
        raise ApiError(401, "wrong_password", "The password is wrong.", field="password")
    response = Response(status_code=204)
    response.set_cookie(
        f"{shares.COOKIE_PREFIX}{share.id}",
        shares.unlock_proof(share),
        max_age=30 * 24 * 3600,
        path=f"/share/{token}",
        httponly=True,
        samesite="lax",
        secure=ctx.settings.secure_cookies,
    )
    return response


def _too_large() -> ApiError:
    return ApiError(413, "body_too_large", f"The request body is larger than {MAX_BODY} bytes.")


async def _read_capped(request: Request) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise _too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def _unlock_body(raw: bytes) -> Unlock:
    """The body as FastAPI would have read it: 400 malformed JSON, 422 naming the field."""
    try:
        return Unlock.model_validate_json(raw)
    except ValidationError as exc:
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None


class SharedReports:
    """``GET /share/{token}/api/reports/{kind}``: the console's report route, for this link's site."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        ctx: Context = request.app.state.ctx
        token = str(scope["path_params"]["token"])
        kind = str(scope["path_params"]["kind"])
        if scope["method"] not in ("GET", "HEAD"):
            await error_response(405, "method_not_allowed", "A shared dashboard is read-only.")(
                scope, receive, send
            )
            return
        try:
            share = await to_thread.run_sync(open_share, ctx, token)
            if not shares.is_unlocked(share, _cookie(request.cookies, share)):
                raise ApiError(401, "password_required", "Enter this link's password to see the dashboard.")
            if not KIND.match(kind):
                raise ApiError(404, "not_found", "No such report.")
        except ApiError as error:
            await error.response()(scope, receive, send)
            return
        path = f"/api/sites/{share.site_id}/reports/{kind}"
        reader = Principal(0, "", None, "share", share.owner_id, frozenset({share.site_id}))
        inner = {
            **scope,
            "path": path,
            "raw_path": path.encode(),
            "state": {**scope.get("state", {}), "user": reader, "session_token": None},
        }
        inner.pop("route", None)
        inner.pop("endpoint", None)
        inner.pop("path_params", None)
        await request.app.router(inner, receive, send)


def public_routes() -> list[Route]:
    return [Route("/share/{token}/api/reports/{kind:path}", SharedReports(), methods=["GET", "HEAD", "POST"])]
