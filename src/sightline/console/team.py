"""The team: invitations, members and their roles, and API keys with their scopes (thin handlers).

Who may call these is decided by the guard (``roles.py``): the management lists and every change
are for the owner and admins. Accepting an invitation needs no session (the link is the proof).
"""

from __future__ import annotations

import logging
from html import escape
from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field, StrictInt

from sightline.accounts.sessions import end_session, start_session
from sightline.console.auth import set_session_cookie
from sightline.console.deps import context, member
from sightline.console.ids import Id
from sightline.console.schemas import Body, Text
from sightline.context import Context
from sightline.teams import keys, members
from sightline.teams.principal import principal_for

router = APIRouter(prefix="/api", tags=["team"])
log = logging.getLogger("sightline.team")


class InvitationCreate(Body):
    email: Annotated[Text, Field(max_length=320)]
    role: Annotated[Text, Field(max_length=16)]
    site_ids: list[StrictInt] | None = None


class InvitationToken(Body):
    token: Annotated[Text, Field(max_length=200)]


class InvitationAccept(Body):
    token: Annotated[Text, Field(max_length=200)]
    password: Annotated[Text, Field(max_length=1024)]


class MemberPatch(Body):
    role: Annotated[Text, Field(max_length=16)] | None = None
    site_ids: list[StrictInt] | None = None


class KeyCreate(Body):
    name: Annotated[Text, Field(max_length=100)]
    site_id: StrictInt | None = None
    # ``teams.scopes`` names; checked there (422 naming ``scopes``). None: ``stats:read``.
    scopes: list[Any] | None = None


@router.post(
    "/invitations",
    summary="Invite someone by a one-time link (shown once)",
    status_code=201,
    responses={403: {}, 409: {}, 422: {}},
)
def create_invitation(body: InvitationCreate, request: Request) -> JSONResponse:
    ctx = context(request)
    with ctx.db.begin() as conn:
        created = members.invite(
            conn,
            member(request),
            body.email,
            body.role,
            body.site_ids,
            ctx.origin,
            ctx.invitation_lifetime,
        )
    created["email_sent"] = _mail_invitation(ctx, member(request).email, created)
    return JSONResponse(created, status_code=201)


def _mail_invitation(ctx: Context, inviter: str, invitation: dict[str, Any]) -> bool:
    """E-mail the link when SMTP is set up; the console shows it either way."""
    if ctx.mailer is None:
        return False
    role = "an admin" if invitation["role"] == "admin" else "a viewer"
    text = (
        f"{inviter} invited you to their Sightline analytics as {role}.\n\n"
        f"Choose a password to join: {invitation['url']}\n\n"
        f"The link works once, until {invitation['expires_at']}.\n"
    )
    html = (
        f"<p>{escape(inviter)} invited you to their Sightline analytics as {role}.</p>"
        f'<p><a href="{escape(invitation["url"])}">Choose a password to join</a></p>'
        f"<p>The link works once, until {escape(invitation['expires_at'])}.</p>"
    )
    try:
        ctx.mailer.send(invitation["email"], "You are invited to Sightline", text, html)
    except OSError:
        log.warning("the invitation e-mail could not be sent; the link is shown in the console")
        return False
    return True


@router.get("/invitations", summary="Invitations not yet accepted", responses={403: {}})
def list_invitations(request: Request) -> dict[str, Any]:
    with context(request).db.begin() as conn:
        return {"invitations": members.list_invitations(conn, member(request).team_id)}


@router.delete(
    "/invitations/{invitation_id}", summary="Withdraw an invitation", status_code=204, responses={404: {}}
)
def revoke_invitation(invitation_id: Id, request: Request) -> Response:
    with context(request).db.begin() as conn:
        members.revoke_invitation(conn, member(request).team_id, invitation_id)
    return Response(status_code=204)


@router.post(
    "/invitations/lookup",
    summary="What an invitation link is for (no session needed)",
    responses={404: {}},
)
def describe_invitation(body: InvitationToken, request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return members.describe_invitation(conn, body.token)


@router.post(
    "/invitations/accept",
    summary="Accept an invitation with a new password, and sign in",
    status_code=201,
    responses={404: {}, 422: {}},
)
def accept_invitation(body: InvitationAccept, request: Request) -> JSONResponse:
    ctx = context(request)
    with ctx.db.begin() as conn:
        user = members.accept_invitation(conn, body.token, body.password)
        if request.state.session_token:
            end_session(conn, request.state.session_token)
        token = start_session(conn, user["id"], ctx.lifetimes)
        row = conn.execute(members.user_row(user["id"])).one()
        who = principal_for(conn, row)
    response = JSONResponse({"user": who.public()}, status_code=201)
    set_session_cookie(response, ctx, token)
    return response


@router.get("/members", summary="The owner and the members of the team", responses={403: {}})
def list_members(request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return {"members": members.list_members(conn, member(request).team_id)}


@router.patch(
    "/members/{member_id}", summary="Change a member's role or sites", responses={403: {}, 404: {}, 422: {}}
)
def update_member(member_id: Id, body: MemberPatch, request: Request) -> dict[str, Any]:
    changes = body.model_dump(exclude_unset=True)
    if changes.get("role", "") is None:
        changes.pop("role")
    with context(request).db.begin() as conn:
        return members.update_member(conn, member(request), member_id, changes)


@router.delete(
    "/members/{member_id}",
    summary="Remove a member; their sessions, pending invitations, API keys and shared links end at once",
    status_code=204,
    responses={403: {}, 404: {}},
)
def remove_member(member_id: Id, request: Request) -> Response:
    with context(request).db.begin() as conn:
        members.remove_member(conn, member(request), member_id)
    return Response(status_code=204)


@router.post(
    "/keys",
    summary="Create an API key with its scopes (the key is in this answer only)",
    status_code=201,
    responses={403: {}, 422: {}},
)
def create_key(body: KeyCreate, request: Request) -> JSONResponse:
    with context(request).db.begin() as conn:
        created = keys.create_key(conn, member(request), body.name, body.site_id, body.scopes)
    return JSONResponse(created, status_code=201)


@router.get("/keys", summary="The team's API keys (never the keys themselves)", responses={403: {}})
def list_keys(request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return {"keys": keys.list_keys(conn, member(request).team_id)}


@router.delete("/keys/{key_id}", summary="Revoke an API key", status_code=204, responses={404: {}})
def revoke_key(key_id: Id, request: Request) -> Response:
    with context(request).db.begin() as conn:
        keys.revoke_key(conn, member(request).team_id, key_id)
    return Response(status_code=204)
