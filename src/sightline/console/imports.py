"""Imports of a site's history (thin handlers over ``sightline.imports``).

``POST /api/sites/{id}/imports?filename=NAME[&kind=plausible|umami|matomo|daily]`` takes the file
itself as the body (``application/zip``, ``text/csv`` or ``application/octet-stream``; the guard lets this one
route stream a body up to ``--import-max-mb``): it is written to the data directory while its
SHA-256 is computed, checked row by row (422 naming file, line and column), and queued: 202 with
the import, whose ``status`` and ``progress`` the console polls at ``GET /api/imports/{id}``.
The same file again answers 200 with the earlier import and ``"duplicate": true``.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

from anyio import to_thread
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import select
from starlette.requests import ClientDisconnect

from sightline.console.deps import context, member, owner
from sightline.console.ids import ImportId, SiteId
from sightline.context import Context
from sightline.database.schema import sites
from sightline.errors import ApiError
from sightline.imports import service
from sightline.imports.formats import ImportFileError, open_upload
from sightline.sites.service import get_site

router = APIRouter(tags=["imports"])
MIB = 2**20
UNPACK_FACTOR = 10  # a zip may unpack to this many times the largest upload


def _check(
    ctx: Context, path: FilePath, name: str, kind: str | None, zone: str
) -> tuple[Any, service.Scanned]:
    limit = int(ctx.settings.import_max_mb) * MIB * UNPACK_FACTOR
    try:
        upload = open_upload(path, name, kind, limit, zone)
        return upload, service.scan(upload)
    except ImportFileError as error:
        status = 413 if error.code == "import_too_large" else 422
        raise ApiError(status, error.code, error.message, field=error.field) from None


def _accept(
    ctx: Context, site_id: int, user_id: int, upload: Any, checksum: str, scanned: service.Scanned
) -> tuple[dict[str, Any], bool]:
    importer = ctx.importer
    with ctx.db.begin() as conn:
        found, created = service.accept(conn, site_id, user_id, upload, checksum, scanned)
        if created:
            upload.path.rename(service.upload_path(importer.directory, int(found["id"])))
    if created:
        importer.submit(int(found["id"]))
    return found, created


async def _receive(request: Request, path: FilePath, digest: Any, max_mb: int) -> int:
    """Writes the request's body to ``path`` as it arrives (never held whole); its size."""
    size = 0
    try:
        with path.open("wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_mb * MIB:
                    raise ApiError(
                        413, "body_too_large", f"The file is larger than {max_mb} MiB (--import-max-mb)."
                    )
                digest.update(chunk)
                out.write(chunk)
    except ClientDisconnect:
        raise ApiError(
            400, "upload_interrupted", "The upload stopped before the whole file arrived. Send it again."
        ) from None
    return size


@router.post(
    "/api/sites/{site_id}/imports",
    summary="Import a site's history: Plausible's, Umami's or Matomo's export, or a CSV of daily figures",
    status_code=202,
    responses={200: {}, 404: {}, 409: {}, 413: {}, 415: {}, 422: {}},
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "The file itself (docs/imports.md): a zip as application/zip or "
            "application/octet-stream, a CSV as text/csv.",
            "content": {
                kind: {"schema": {"type": "string", "format": "binary"}}
                for kind in ("application/octet-stream", "text/csv")
            },
        }
    },
)
async def upload(
    request: Request,
    site_id: SiteId,
    filename: Annotated[
        str, Query(min_length=1, max_length=255, description="The file's name, e.g. export.zip")
    ],
    kind: Annotated[
        Literal["plausible", "umami", "matomo", "daily"] | None,
        Query(
            description="plausible (the zip, or one of its files), umami (its events CSV), matomo "
            "(a zip of its reports' CSV files) or daily; default: by the file"
        ),
    ] = None,
) -> JSONResponse:
    ctx = context(request)
    importer = ctx.importer
    who = owner(request)

    def site() -> str:
        with ctx.db.read() as conn:
            return str(get_site(conn, who.id, site_id)["timezone"])

    zone = await to_thread.run_sync(site)
    name = filename.replace("\\", "/").rsplit("/", 1)[-1] or "upload"
    importer.directory.mkdir(parents=True, exist_ok=True)
    path = importer.directory / f"upload-{secrets.token_hex(8)}.part"
    digest = hashlib.sha256()
    try:
        size = await _receive(request, path, digest, int(ctx.settings.import_max_mb))
        if size == 0:
            raise ApiError(422, "invalid_import", "The file is empty.", field="file")
        checked, scanned = await to_thread.run_sync(_check, ctx, path, name, kind, zone)
        found, created = await to_thread.run_sync(
            _accept, ctx, site_id, member(request).user_id, checked, digest.hexdigest(), scanned
        )
    finally:
        path.unlink(missing_ok=True)
    return JSONResponse({**found, "duplicate": not created}, status_code=202 if created else 200)


@router.get("/api/sites/{site_id}/imports", summary="The site's imports, newest first", responses={404: {}})
def list_imports(request: Request, site_id: SiteId) -> dict[str, Any]:
    ctx = context(request)
    with ctx.db.read() as conn:
        get_site(conn, owner(request).id, site_id)
        return {"imports": service.list_imports(conn, site_id)}


def _team_sites(request: Request) -> Any:
    return select(sites.c.id).where(sites.c.owner_id == owner(request).id)


@router.get("/api/imports/{import_id}", summary="One import: its status and progress", responses={404: {}})
def get_import(request: Request, import_id: ImportId) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return service.get_import(conn, import_id, _team_sites(request))


@router.delete(
    "/api/imports/{import_id}",
    summary="Delete an import and the figures it brought",
    status_code=204,
    responses={404: {}},
)
def delete_import(request: Request, import_id: ImportId) -> Response:
    ctx = context(request)
    with ctx.db.begin() as conn:
        service.get_import(conn, import_id, _team_sites(request))
        service.delete_import(conn, import_id)
    # Gone from the reports and the API now; its figures leave in bounded steps.
    ctx.importer.delete(import_id)
    return Response(status_code=204)
