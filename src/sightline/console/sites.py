"""Site connections: list, create, change, and retry the connection check."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from sightline.console.deps import context, owner
from sightline.console.ids import SiteId
from sightline.console.schemas import EmptyBody, SiteCreate, SitePatch
from sightline.errors import ApiError
from sightline.recordings.service import Recordings
from sightline.sites import service

router = APIRouter(prefix="/api/sites", tags=["sites"])

NULLABLE = frozenset({"retention_days"})  # null means "the server's setting"


@router.get("", summary="List sites with their connection state")
def list_sites(request: Request) -> dict[str, Any]:
    ctx = context(request)
    with ctx.db.read() as conn:
        rows = service.list_sites(conn, owner(request).id)
    who = owner(request)
    return {"sites": [service.public_site(row, ctx.origin) for row in rows if who.may_read_site(row["id"])]}


@router.get("/{site_id}", summary="One site with its connection state", responses={404: {}})
def read_site(site_id: SiteId, request: Request) -> dict[str, Any]:
    ctx = context(request)
    with ctx.db.read() as conn:
        row = service.get_site(conn, owner(request).id, site_id)
    return service.public_site(row, ctx.origin)


@router.post("", summary="Create a site connection", status_code=201, responses={409: {}, 422: {}})
def create_site(body: SiteCreate, request: Request) -> JSONResponse:
    ctx = context(request)
    with ctx.db.begin() as conn:
        row = service.create_site(conn, owner(request).id, body.name, body.domain)
    return JSONResponse(service.public_site(row, ctx.origin), status_code=201)


@router.patch("/{site_id}", summary="Change a site", responses={404: {}, 422: {}})
def patch_site(site_id: SiteId, body: SitePatch, request: Request) -> dict[str, Any]:
    ctx = context(request)
    changes = body.model_dump(exclude_unset=True)
    for name, value in changes.items():
        if value is None and name not in NULLABLE:
            raise ApiError(422, "invalid_field", f"The field '{name}' may not be null.", field=name)
    with ctx.db.begin() as conn:
        row = service.update_site(conn, owner(request).id, site_id, changes)
    return service.public_site(row, ctx.origin)


@router.delete("/{site_id}", summary="Delete a site and all its data", status_code=204, responses={404: {}})
def delete_site(site_id: SiteId, request: Request) -> Response:
    ctx = context(request)
    recordings: Recordings = request.app.state.recordings
    with ctx.db.begin() as conn:
        service.get_site(conn, owner(request).id, site_id)
        ids = recordings.ids_for_site(conn, site_id)
        service.delete_site(conn, owner(request).id, site_id)
    # The recordings' index rows went with the site; their files go now (retention's sweep
    # would remove them later otherwise).
    recordings.delete_files(ids)
    return Response(status_code=204)


@router.post("/{site_id}/retry", summary="Check the site's connection now", responses={404: {}, 429: {}})
def retry_site(site_id: SiteId, request: Request, body: EmptyBody | None = None) -> dict[str, Any]:
    ctx = context(request)
    with ctx.db.read() as conn:
        site = service.get_site(conn, owner(request).id, site_id)
    wait = ctx.checker.reserve(site["id"])
    if wait:
        raise ApiError(
            429,
            "check_too_soon",
            "This site was checked a moment ago; try again shortly.",
            headers={"Retry-After": str(wait)},
        )
    result = ctx.checker.check(site["domain"], site["key"])
    with ctx.db.begin() as conn:
        service.record_check(conn, site["id"], result.error, result.detail)
        row = service.get_site(conn, owner(request).id, site_id)
    return service.public_site(row, ctx.origin)
