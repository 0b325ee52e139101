"""Visitors' data rights for the owner: erase one visitor, export one visitor, list erasures."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from sightline.console.deps import context, owner
from sightline.console.ids import SiteId
from sightline.recordings.service import Recordings
from sightline.sites import service as sites
from sightline.visitors import rights

router = APIRouter(prefix="/api/sites", tags=["visitors"])

# Any text the route can carry, so that rights.check_visitor_id answers every bad code with 422;
# ":path" lets a code hold "/" (sent as "/" or as "%2F").
VisitorId = Annotated[str, Path(description="The visitor code (percent-encoded: '/' as %2F).")]


def _recordings(request: Request) -> Recordings:
    service: Recordings = request.app.state.recordings
    return service


@router.delete(
    "/{site_id}/visitors/{visitor_id:path}",
    summary="Erase everything stored about one visitor (events, recordings, survey responses)",
    status_code=202,
    responses={404: {}, 422: {}},
)
def erase_visitor(site_id: SiteId, visitor_id: VisitorId, request: Request) -> JSONResponse:
    ctx = context(request)
    user = owner(request)
    code = rights.check_visitor_id(visitor_id)
    with ctx.db.read() as conn:
        sites.get_site(conn, user.id, site_id)
    erasure = rights.erase(ctx.db, _recordings(request), site_id, code, user.user_id)
    return JSONResponse({"erasure": erasure}, status_code=202)


@router.get(
    "/{site_id}/visitors/{visitor_id:path}/export",
    summary="Everything stored about one visitor, as JSON (for an access request)",
    responses={404: {}, 422: {}},
)
def export_visitor(site_id: SiteId, visitor_id: VisitorId, request: Request) -> Response:
    ctx = context(request)
    code = rights.check_visitor_id(visitor_id)
    with ctx.db.read() as conn:
        sites.get_site(conn, owner(request).id, site_id)
    # Streamed a page of events at a time: parallel exports of large visitors stay small.
    return StreamingResponse(
        rights.export_stream(ctx.db, site_id, code),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="visitor-site{site_id}.json"'},
    )


@router.get("/{site_id}/erasures", summary="The site's visitor erasures, newest first", responses={404: {}})
def list_erasures(
    site_id: SiteId,
    request: Request,
    offset: Annotated[int, Query(ge=0, le=100_000, description="Start position.")] = 0,
) -> dict[str, Any]:
    ctx = context(request)
    with ctx.db.read() as conn:
        sites.get_site(conn, owner(request).id, site_id)
        return {"erasures": rights.list_erasures(conn, site_id, offset)}
