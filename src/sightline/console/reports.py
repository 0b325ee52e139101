"""Reports of a site: summary, time series, breakdowns and realtime visitors (thin handlers).

The query parameters are declared for the OpenAPI document; ``reports.params`` checks them all
(unknown and repeated ones too) and answers 422 naming the one at fault.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from sightline.console.deps import context, owner
from sightline.reports import params, service

router = APIRouter(prefix="/api/sites/{site_id}/reports", tags=["reports"])

SiteId = Annotated[int, Path(ge=1, le=2**62, description="The site's id.")]
ERRORS: dict[int | str, dict[str, Any]] = {404: {}, 422: {}}
Range = Annotated[str | None, Query(description="today, 7d (default), 30d or custom")]
From = Annotated[str | None, Query(alias="from", description="First day (YYYY-MM-DD), range=custom")]
To = Annotated[str | None, Query(alias="to", description="Last day (YYYY-MM-DD), range=custom")]
Compare = Annotated[str | None, Query(description="true: also the previous period")]
Page = Annotated[str | None, Query(description="Filter: visits that viewed this path")]
Source = Annotated[str | None, Query(description="Filter: visits from this source")]
Event = Annotated[str | None, Query(description="Filter: visits that sent this custom event")]


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
def summary(
    site_id: SiteId,
    request: Request,
    range: Range = None,
    date_from: From = None,
    date_to: To = None,
    compare: Compare = None,
    page: Page = None,
    source: Source = None,
    event: Event = None,
) -> dict[str, Any]:
    return _report(request, site_id, "summary")


@router.get("/timeseries", summary="The figures hour by hour or day by day", responses=ERRORS)
def timeseries(
    site_id: SiteId,
    request: Request,
    range: Range = None,
    date_from: From = None,
    date_to: To = None,
    compare: Compare = None,
    page: Page = None,
    source: Source = None,
    event: Event = None,
) -> dict[str, Any]:
    return _report(request, site_id, "timeseries")


@router.get("/breakdown", summary="Top values of one dimension", responses=ERRORS)
def breakdown(
    site_id: SiteId,
    request: Request,
    dimension: Annotated[
        str | None, Query(description="pages, entry_pages, sources, ... (docs/reports.md)")
    ] = None,
    limit: Annotated[str | None, Query(description="Rows, 1 to 100 (default 10)")] = None,
    name: Annotated[str | None, Query(description="The custom event, with dimension=props")] = None,
    range: Range = None,
    date_from: From = None,
    date_to: To = None,
    page: Page = None,
    source: Source = None,
    event: Event = None,
) -> dict[str, Any]:
    return _report(request, site_id, "breakdown", ("dimension", "limit", "name"))


@router.get("/realtime", summary="Visitors in the last 5 minutes", responses={404: {}, 422: {}})
def realtime(site_id: SiteId, request: Request) -> dict[str, Any]:
    params.parse(request.query_params.multi_items(), ())
    ctx = context(request)
    with ctx.db.read() as conn:
        return service.realtime(conn, owner(request).id, site_id)
