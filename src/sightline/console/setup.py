"""``POST /setup``: create the first owner with the one-time setup token, and sign them in."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from sightline.accounts.sessions import start_session
from sightline.accounts.setup import complete_setup
from sightline.console.auth import set_session_cookie
from sightline.console.deps import context
from sightline.console.schemas import SetupBody

router = APIRouter(tags=["setup"])


@router.post(
    "/setup", summary="Create the first owner with the setup token", status_code=201, responses={403: {}}
)
def setup(body: SetupBody, request: Request) -> JSONResponse:
    ctx = context(request)
    with ctx.db.begin() as conn:
        user = complete_setup(conn, body.token, body.email, body.password)
        token = start_session(conn, user["id"], ctx.lifetimes)
    response = JSONResponse({"user": user}, status_code=201)
    set_session_cookie(response, ctx, token)
    return response
