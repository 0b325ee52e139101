"""``POST /api/sites/{id}/email-reports/send``: the site's last weekly or monthly digest, now, to
the member who asks (to see what the team receives; the schedule itself is ``mail.job``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request

from sightline.console.deps import context, member
from sightline.console.schemas import Body
from sightline.errors import ApiError
from sightline.mail.job import MailJob
from sightline.sites.service import get_site
from sightline.storage.types import utcnow

router = APIRouter(tags=["e-mail reports"])


class SendDigest(Body):
    kind: Literal["weekly", "monthly"]


@router.post(
    "/api/sites/{site_id}/email-reports/send",
    summary="Send the site's last weekly or monthly digest to me now",
    responses={403: {}, 404: {}, 409: {}, 422: {}, 502: {}},
)
def send_digest(
    site_id: Annotated[int, Path(ge=1, le=2**62)], body: SendDigest, request: Request
) -> dict[str, Any]:
    ctx = context(request)
    who = member(request)
    if ctx.mailer is None or ctx.store is None:
        raise ApiError(
            409,
            "smtp_not_configured",
            "E-mail is not set up: start Sightline with --smtp-url to send reports.",
        )
    with ctx.db.read() as conn:
        site = get_site(conn, who.team_id, site_id)
    job = MailJob(ctx.db, ctx.store, ctx.mailer, ctx.origin)
    try:
        job.send_digest(site, body.kind, [who.email], utcnow(), once=False)
    except OSError as error:
        raise ApiError(
            502, "smtp_failed", "The mail server did not accept the message; check --smtp-url and try again."
        ) from error
    return {"sent_to": who.email, "kind": body.kind}
