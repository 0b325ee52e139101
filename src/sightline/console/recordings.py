"""Session recordings for the owner: list a site's recordings, read one, stream its events, delete
it, and find a page's recorded snapshot (the click heatmap's background)."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response, StreamingResponse

from sightline.console.deps import context, owner
from sightline.console.ids import SiteId
from sightline.errors import ApiError
from sightline.recordings import snapshots
from sightline.recordings.service import Recordings, details, parse_offset
from sightline.recordings.store import StorageUnavailableError
from sightline.sites import service as sites

router = APIRouter(prefix="/api", tags=["recordings"])

# Checked with pydantic's engine (\z: no trailing newline); the OpenAPI document gives JSON Schema's
# (ECMA-262) form, which has neither \A nor \z and whose $ ends the text.
RecordingId = Annotated[
    str,
    Path(
        pattern=r"\A[A-Za-z0-9_-]{16,64}\z",
        json_schema_extra={"pattern": "^[A-Za-z0-9_-]{16,64}$"},
        description="The recording's id (the SDK's recordingId).",
    ),
]


def _service(request: Request) -> Recordings:
    service: Recordings = request.app.state.recordings
    return service


@router.get(
    "/sites/{site_id}/recordings",
    summary="List a site's recordings, newest first, 50 at a time",
    responses={404: {}, 422: {}},
)
def list_recordings(
    site_id: SiteId,
    request: Request,
    offset: Annotated[str | None, Query(description="Start position, 0 to 100000; default 0.")] = None,
) -> dict[str, Any]:
    start = parse_offset(offset)
    with context(request).db.read() as conn:
        sites.get_site(conn, owner(request).id, site_id)
        return {"recordings": _service(request).list_for_site(conn, site_id, start)}


@router.get(
    "/sites/{site_id}/recordings/snapshot",
    summary="The newest recorded snapshot of one page of a site (masked as recordings are)",
    responses={404: {}, 422: {}},
)
def page_snapshot(
    site_id: SiteId,
    request: Request,
    path: Annotated[str | None, Query(description="The page's path, starting with '/' (required).")] = None,
    viewport: Annotated[
        str | None,
        Query(description="Prefer a window of this width: desktop (992 px and up), tablet or phone."),
    ] = None,
) -> Response:
    """``{"recording_enabled", "snapshot"}``: ``snapshot`` is null when no recording shows the page;
    else its recording, window size and width class, and the recorder's meta event and full
    snapshot (``events``) for rrweb's replayer."""
    if path is None or not path.startswith("/") or len(path) > 2000 or not path.isprintable():
        message = "The parameter 'path' is a page path of 1 to 2000 characters starting with '/'."
        raise ApiError(422, "invalid_parameter", message, field="path")
    if viewport is not None and viewport not in ("desktop", "tablet", "phone"):
        message = "The parameter 'viewport' must be one of desktop, tablet, phone."
        raise ApiError(422, "invalid_parameter", message, field="viewport")
    with context(request).db.read() as conn:
        site = sites.get_site(conn, owner(request).id, site_id)
        found = snapshots.find(conn, _service(request), site_id, path, viewport)
    body = {"recording_enabled": bool(site["recording_enabled"]), "snapshot": found and found.public()}
    return Response(orjson.dumps(body), media_type="application/json")


@router.get("/recordings/{recording_id}", summary="Read a recording's metadata", responses={404: {}})
def get_recording(recording_id: RecordingId, request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return details(_service(request).get(conn, owner(request).id, recording_id))


@router.get(
    "/recordings/{recording_id}/events",
    summary="Stream a recording's events for the player, in order",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/json": {}}}, 404: {}, 503: {}},
)
def recording_events(recording_id: RecordingId, request: Request) -> StreamingResponse:
    service = _service(request)
    with context(request).db.read() as conn:
        service.get(conn, owner(request).id, recording_id)
        seqs = service.chunk_seqs(conn, recording_id)
    try:
        stream = service.stream_events(recording_id, seqs)
    except StorageUnavailableError:
        message = (
            "The recordings storage cannot be reached right now, so this recording cannot be replayed. "
            "Try again shortly; the Health page says what is wrong and what to do."
        )
        raise ApiError(503, "storage_unavailable", message, headers={"Retry-After": "30"}) from None
    return StreamingResponse(stream, media_type="application/json")


@router.delete(
    "/recordings/{recording_id}",
    summary="Delete a recording and its files",
    status_code=204,
    responses={404: {}},
)
def delete_recording(recording_id: RecordingId, request: Request) -> Response:
    service = _service(request)
    with context(request).db.read() as conn:
        service.get(conn, owner(request).id, recording_id)
    service.delete([recording_id])
    return Response(status_code=204)
