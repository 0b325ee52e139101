"""The way out of a site's e-mails, without signing in: ``/unsubscribe/{token}``.

Opening the link (``GET``) changes nothing: it asks, with one button, whether to stop the e-mails
(link scanners of mail providers open every link of a message, and must not unsubscribe anyone).
The button, or a mail client's one-click request (``POST`` with ``List-Unsubscribe=One-Click``,
RFC 8058), turns the member's e-mails about that site off at once; the page says so and offers to
undo it (``POST /unsubscribe/{token}/undo``). In the console the member turns them on again under
the site's Settings, E-mail reports. The token is the link's only authority (no cookie, no
Origin): a random secret per member and site; an unknown one is 404.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from sightline.context import Context
from sightline.mail import subscriptions
from sightline.web.pages import render

router = APIRouter(include_in_schema=False)
HINT = (
    "Other sites' e-mails stay as they are. You can also switch these on and off in the console: "
    "the site's Settings, E-mail reports."
)


def _page(request: Request, token: str, *, enabled: bool | None) -> HTMLResponse:
    """Sets the member's e-mails about the site on or off (``None``: only asks) and says so."""
    ctx: Context = request.app.state.ctx
    with ctx.db.begin() as conn:
        found = subscriptions.by_token(conn, token)
        if found is not None and enabled is not None:
            subscriptions.set_enabled(conn, int(found.site_id), int(found.user_id), enabled)
    if found is None:
        return render(
            "unsubscribe.html",
            status=404,
            needs_assets=False,
            heading="This unsubscribe link is not known",
            message="It was copied wrongly, or the site or the member it was for was deleted. "
            "Nothing was changed.",
            action="",
            form_hidden="hidden",
            button="",
            hint="",
        )
    name, email = str(found.site_name), str(found.email)
    if enabled is None and not found.enabled:
        heading = f"You are already unsubscribed from {name}"
        message = f"{email} receives no digests or traffic notices about {name}."
        button, action = "Receive them again", f"/unsubscribe/{token}/undo"
    elif enabled is None:
        heading = f"Stop e-mails about {name}?"
        message = f"{email} will no longer receive the digests and traffic notices about {name}."
        button, action = "Unsubscribe", f"/unsubscribe/{token}"
    elif enabled:
        heading = f"You receive e-mails about {name} again"
        message = f"{email} receives the weekly and monthly digests and traffic notices about {name}."
        button, action = "Unsubscribe again", f"/unsubscribe/{token}"
    else:
        heading = f"You are unsubscribed from {name}"
        message = f"{email} no longer receives digests and traffic notices about {name}."
        button, action = "Undo: keep receiving them", f"/unsubscribe/{token}/undo"
    return render(
        "unsubscribe.html",
        needs_assets=False,
        heading=heading,
        message=message,
        action=action,
        form_hidden="",
        button=button,
        hint=HINT,
    )


@router.get("/unsubscribe/{token}")
def unsubscribe_link(request: Request, token: str) -> HTMLResponse:
    return _page(request, token, enabled=None)


@router.post("/unsubscribe/{token}")
def unsubscribe(request: Request, token: str) -> HTMLResponse:
    return _page(request, token, enabled=False)


@router.post("/unsubscribe/{token}/undo")
def undo(request: Request, token: str) -> HTMLResponse:
    return _page(request, token, enabled=True)
