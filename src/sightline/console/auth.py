"""``POST /api/login``, ``POST /api/logout``, ``GET /api/me``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from sightline.accounts import passwords, users
from sightline.accounts.sessions import COOKIE_NAME, end_session, start_session
from sightline.console.deps import client_ip, context, member
from sightline.console.schemas import EmptyBody, LoginBody
from sightline.context import Context
from sightline.errors import ApiError
from sightline.teams.principal import principal_for

router = APIRouter(prefix="/api", tags=["session"])

BAD_CREDENTIALS = "The e-mail address or the password is wrong."


def set_session_cookie(response: Response, ctx: Context, token: str) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        max_age=int(ctx.lifetimes.absolute.total_seconds()),
        path="/",
        httponly=True,
        samesite="lax",
        secure=ctx.settings.secure_cookies,
    )


def _authenticate(ctx: Context, email: str, password: str) -> Any:
    with ctx.db.begin() as conn:
        user = users.find_by_email(conn, email)
        if not passwords.verify_password(user.password_hash if user else None, password):
            return None
        if passwords.needs_rehash(user.password_hash):
            users.set_password_hash(conn, user.id, passwords.hash_password(password))
        return user


@router.post("/login", summary="Sign in", responses={401: {}, 429: {}})
def login(body: LoginBody, request: Request) -> JSONResponse:
    ctx = context(request)
    email = users.normalise_email(body.email)
    ip = client_ip(request)
    throttle = ctx.throttle
    if not throttle.verifying.acquire(blocking=False):  # Argon2 costs ~0.3 s and 64 MiB each
        raise ApiError(
            429,
            "login_busy",
            "Too many sign-ins are being checked at once; try again in a second.",
            headers={"Retry-After": "1"},
        )
    try:
        wait = throttle.attempt(email, ip)  # counted before the check: no race past the limit
        if wait:
            raise ApiError(
                429,
                "too_many_attempts",
                "Too many failed sign-ins; try again later.",
                headers={"Retry-After": str(wait)},
            )
        user = _authenticate(ctx, email, body.password)
    finally:
        throttle.verifying.release()
    if user is None:
        raise ApiError(401, "invalid_credentials", BAD_CREDENTIALS)
    throttle.passed(email, ip)
    with ctx.db.begin() as conn:
        if request.state.session_token:
            end_session(conn, request.state.session_token)
        token = start_session(conn, user.id, ctx.lifetimes)
        who = principal_for(conn, user)
    response = JSONResponse({"user": who.public()})
    set_session_cookie(response, ctx, token)
    return response


@router.post("/logout", summary="Sign out", status_code=204)
def logout(request: Request, body: EmptyBody | None = None) -> Response:
    ctx = context(request)
    with ctx.db.begin() as conn:
        end_session(conn, request.state.session_token)
    response = Response(status_code=204)
    response.delete_cookie(
        COOKIE_NAME, path="/", httponly=True, samesite="lax", secure=ctx.settings.secure_cookies
    )
    return response


@router.get("/me", summary="The signed-in member: id, email, created_at and role (PRODUCT.md)")
def me(request: Request) -> dict[str, Any]:
    return member(request).public()
