"""``POST /api/sites/{id}/email-reports/send``: the site's last weekly or monthly digest, now, to
the member who asks (to see what the team receives; the schedule itself is ``mail.job``).
``GET``/``PUT /api/sites/{id}/email-reports/subscription``: whether the member who asks receives
the site's e-mails (every member may change their own, viewers too)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request

from sightline.console.deps import context, member
from sightline.console.ids import SiteId
from sightline.console.schemas import Body
from sightline.database.types import utcnow
from sightline.errors import ApiError
from sightline.mail import subscriptions
from sightline.mail.job import MailJob
from sightline.mail.subscriptions import Recipient
from sightline.sites.service import get_site

router = APIRouter(tags=["e-mail reports"])


class SendDigest(Body):
    kind: Literal["weekly", "monthly"]


@router.post(
    "/api/sites/{site_id}/email-reports/send",
    summary="Send the site's last weekly or monthly digest to me now",
    responses={403: {}, 404: {}, 409: {}, 422: {}, 502: {}},
)
def send_digest(site_id: SiteId, body: SendDigest, request: Request) -> dict[str, Any]:
    ctx = context(request)
    who = member(request)
    if ctx.mailer is None:
        raise ApiError(
            409,
            "smtp_not_configured",
            "E-mail is not set up: start Sightline with --smtp-url to send reports.",
        )
    with ctx.db.begin() as conn:
        site = get_site(conn, who.team_id, site_id)
        token, _ = subscriptions.subscription(conn, site_id, who.user_id)
    job = MailJob(ctx.db, ctx.store, ctx.mailer, ctx.origin)
    try:
        job.send_digest(site, body.kind, [Recipient(who.user_id, who.email, token)], utcnow(), once=False)
    except OSError as error:
        raise ApiError(
            502, "smtp_failed", "The mail server did not accept the message; check --smtp-url and try again."
        ) from error
    return {"sent_to": who.email, "kind": body.kind}


class Subscription(Body):
    enabled: bool


def _subscription(request: Request, site_id: int, enabled: bool | None) -> dict[str, Any]:
    ctx = context(request)
    who = member(request)
    with ctx.db.begin() as conn:
        get_site(conn, who.team_id, site_id)
        if not who.may_read_site(site_id):
            raise ApiError(404, "not_found", "No site with that id exists.")
        if enabled is not None:
            subscriptions.set_enabled(conn, site_id, who.user_id, enabled)
        _, now_enabled = subscriptions.subscription(conn, site_id, who.user_id)
    return {"site_id": site_id, "email": who.email, "enabled": now_enabled}


@router.get(
    "/api/sites/{site_id}/email-reports/subscription",
    summary="Whether I receive this site's digests and notices",
    responses={404: {}},
)
def get_subscription(site_id: SiteId, request: Request) -> dict[str, Any]:
    return _subscription(request, site_id, None)


@router.put(
    "/api/sites/{site_id}/email-reports/subscription",
    summary="Turn my digests and notices of this site on or off",
    responses={404: {}, 422: {}},
)
def put_subscription(site_id: SiteId, body: Subscription, request: Request) -> dict[str, Any]:
    return _subscription(request, site_id, body.enabled)
