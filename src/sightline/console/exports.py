"""CSV exports: every report table (``/api/sites/{id}/reports/export/*.csv``, which API keys and
shared links may read like the reports) and a period's raw events (``/api/sites/{id}/events.csv``,
signed-in members only: it carries visitor codes)."""

from __future__ import annotations

from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse

from sightline.console.deps import context, owner
from sightline.console.ids import SiteId
from sightline.console.reports import BREAKDOWN_OF, PERIOD, Asked, report_answer
from sightline.database.types import utcnow
from sightline.exports import tables
from sightline.exports.events import stream_events
from sightline.reports import params
from sightline.reports.period import first_day_of, period_of
from sightline.sites.service import get_site

router = APIRouter(tags=["exports"])
ERRORS: dict[int | str, dict[str, Any]] = {404: {}, 422: {}}
CSV = "text/csv; charset=utf-8"


def _csv(text: str, name: str) -> Response:
    return Response(text, media_type=CSV, headers={"Content-Disposition": f'attachment; filename="{name}"'})


def _table(request: Request, report: Asked, kind: str) -> Response:
    answer = report_answer(request, report, kind)
    text = getattr(tables, f"{kind}_csv")(answer)
    return _csv(text, tables.filename(report.site_id, kind, answer))


@router.get(
    "/api/sites/{site_id}/reports/export/summary.csv",
    summary="The summary as CSV",
    responses=ERRORS,
    openapi_extra=PERIOD.openapi,
)
def summary_csv(request: Request, report: Annotated[Asked, PERIOD.depends]) -> Response:
    return _table(request, report, "summary")


@router.get(
    "/api/sites/{site_id}/reports/export/timeseries.csv",
    summary="The time series as CSV",
    responses=ERRORS,
    openapi_extra=PERIOD.openapi,
)
def timeseries_csv(request: Request, report: Annotated[Asked, PERIOD.depends]) -> Response:
    return _table(request, report, "timeseries")


@router.get(
    "/api/sites/{site_id}/reports/export/breakdown.csv",
    summary="One breakdown table as CSV",
    responses=ERRORS,
    openapi_extra=BREAKDOWN_OF.openapi,
)
def breakdown_csv(request: Request, report: Annotated[Asked, BREAKDOWN_OF.depends]) -> Response:
    return _table(request, report, "breakdown")


@router.get(
    "/api/sites/{site_id}/events.csv",
    summary="The raw events of a period as CSV (streamed from the durable log)",
    responses=ERRORS,
)
def events_csv(
    request: Request,
    site_id: SiteId,
    range_: Annotated[
        str | None, Query(alias="range", description="A period as the reports take it (default 7d)")
    ] = None,
    date_from: Annotated[str | None, Query(alias="from", description="First day (YYYY-MM-DD)")] = None,
    date_to: Annotated[str | None, Query(alias="to", description="Last day (YYYY-MM-DD)")] = None,
) -> StreamingResponse:
    ctx = context(request)
    query = params.parse(request.query_params.multi_items(), ("range", "from", "to"))
    with ctx.db.read() as conn:
        site = get_site(conn, owner(request).id, site_id)
    zone = ZoneInfo(site["timezone"])
    since = first_day_of(site["created_at"], zone) if query.range == "all" else None
    period = period_of(query.range, query.date_from, query.date_to, zone, utcnow(), since=since)
    described = period.describe()
    name = f"site-{site_id}-events-{described['from']}-{described['to']}.csv"
    return StreamingResponse(
        stream_events(ctx.db, site_id, period.start, period.end),
        media_type=CSV,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
