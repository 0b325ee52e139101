"""Reports of a site: summary, time series, breakdowns and realtime visitors (thin handlers)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from sightline.console.deps import context, owner
from sightline.reports import params, service

router = APIRouter(prefix="/api/sites/{site_id}/reports", tags=["reports"])

SiteId = Annotated[int, Path(ge=1, le=2**62, description="The site's id.")]
ERRORS: dict[int | str, dict[str, Any]] = {404: {}, 422: {}}


def _report(request: Request, site_id: int, kind: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    query = params.parse(request.query_params.multi_items(), params.COMMON + extra)
    ctx = context(request)
    with ctx.db.read() as conn:
        report = service.Report.open(conn, ctx.db.dialect, owner(request).id, site_id, query)
        result: dict[str, Any] = getattr(report, kind)()
    return result


@router.get(
    "/summary", summary="Visitors, visits, pageviews, bounce rate and visit duration", responses=ERRORS
)
def summary(site_id: SiteId, request: Request) -> dict[str, Any]:
    return _report(request, site_id, "summary")


@router.get("/timeseries", summary="The figures hour by hour or day by day", responses=ERRORS)
def timeseries(site_id: SiteId, request: Request) -> dict[str, Any]:
    return _report(request, site_id, "timeseries")


@router.get("/breakdown", summary="Top values of one dimension", responses=ERRORS)
def breakdown(site_id: SiteId, request: Request) -> dict[str, Any]:
    return _report(request, site_id, "breakdown", ("dimension", "limit", "name"))


@router.get("/realtime", summary="Visitors in the last 5 minutes", responses={404: {}})
def realtime(site_id: SiteId, request: Request) -> dict[str, Any]:
    params.parse(request.query_params.multi_items(), ())
    ctx = context(request)
    with ctx.db.read() as conn:
        return service.realtime(conn, owner(request).id, site_id)
