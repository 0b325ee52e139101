"""Annotations of a site for the console: list, add, change, remove (thin handlers over
``sightline.annotations``). Owners and admins change them; every member who reads the site, and
its shared dashboards, see them on the graph (the time series carries its period's notes)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from sightline.annotations import service
from sightline.console.deps import context, owner
from sightline.console.ids import AnnotationId, SiteId

router = APIRouter(tags=["annotations"])


@router.get("/api/sites/{site_id}/annotations", summary="The site's notes on its graph", responses={404: {}})
def list_annotations(site_id: SiteId, request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return {"annotations": service.list_annotations(conn, owner(request).id, site_id)}


@router.post(
    "/api/sites/{site_id}/annotations",
    summary="Add a dated note to the site's graph",
    status_code=201,
    responses={404: {}, 422: {}},
)
def create_annotation(site_id: SiteId, body: dict[str, Any], request: Request) -> JSONResponse:
    with context(request).db.begin() as conn:
        note = service.create_annotation(conn, owner(request).id, site_id, body)
    return JSONResponse(note, status_code=201)


@router.patch("/api/annotations/{annotation_id}", summary="Change a note", responses={404: {}, 422: {}})
def patch_annotation(annotation_id: AnnotationId, body: dict[str, Any], request: Request) -> dict[str, Any]:
    with context(request).db.begin() as conn:
        return service.update_annotation(conn, owner(request).id, annotation_id, body)


@router.delete(
    "/api/annotations/{annotation_id}", summary="Remove a note", status_code=204, responses={404: {}}
)
def delete_annotation(annotation_id: AnnotationId, request: Request) -> Response:
    with context(request).db.begin() as conn:
        service.delete_annotation(conn, owner(request).id, annotation_id)
    return Response(status_code=204)
