"""Every site at a glance: ``GET /api/overview``, each site the caller may read (thin handler).

An owner and admins see every site of the team, a viewer the sites the role gives, an API key its
sites (``console/roles.py`` lets a key read this list; the handler filters it as ``GET /api/sites``
does). The figures are ``reports.overview``'s: one store query for all the sites.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from sightline.console.deps import context, owner
from sightline.console.reports import ERRORS, Answer, answered, parameter_doc
from sightline.database.types import utcnow
from sightline.imports.figures import ImportedFigures
from sightline.reports import params
from sightline.sites import service as sites

router = APIRouter(prefix="/api/overview", tags=["reports"])
ASKED = ("range", "from", "to", "imported")
DOCUMENTED: dict[str, Any] = {"parameters": [parameter_doc(name) for name in ASKED]}


@router.get(
    "",
    response_model=Answer,
    summary="Every site's visitors, pageviews, change and series over one period",
    responses=ERRORS,
    openapi_extra=DOCUMENTED,
)
def overview(request: Request) -> JSONResponse:
    # Here: its figures use numpy, which a server whose overview is never asked does without.
    from sightline.reports import overview as figures

    query = params.parse(request.query_params.multi_items(), ASKED)
    ctx = context(request)
    who = owner(request)
    with ctx.db.read() as conn:
        rows = [row for row in sites.list_sites(conn, who.id) if who.may_read_site(int(row["id"]))]
        with_imports = figures.imported_sites(conn) if rows else set()
        imported = ImportedFigures(conn.engine)
    store = ctx.store
    result = figures.overview(
        store,
        rows,
        query.range,
        query.date_from,
        query.date_to,
        utcnow(),
        imported,
        with_imports,
        query.imported,
    )
    return answered(result)
