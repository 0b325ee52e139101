"""Reports of a site: summary, time series, breakdowns, web vitals, click heatmaps and realtime
visitors (thin handlers).

Each handler takes one dependency, ``asked(...)``: it declares the site id and the query
parameters the endpoint documents (for the OpenAPI document), and returns them checked by
``reports.params``, which looks at every parameter of the request (unknown and repeated ones
too) and answers 422 naming the one at fault. A bad site id is answered (404) before the query is
looked at, as FastAPI validates the declared parameters before it calls the dependency.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import TypeAdapter

from sightline.console.deps import context, owner
from sightline.context import Context
from sightline.errors import ApiError
from sightline.reports import params, service
from sightline.reports.filters import NAMES
from sightline.sites.service import get_site
from sightline.store.client import Store

router = APIRouter(prefix="/api/sites/{site_id}/reports", tags=["reports"])

ERRORS: dict[int | str, dict[str, Any]] = {404: {}, 422: {}}
Answer = dict[str, Any]  # each endpoint's documented answer (``response_model``)
_ANSWER = TypeAdapter(Answer)


def answered(result: Answer) -> JSONResponse:
    """The answer as FastAPI renders a handler's dict (the same pydantic conversion, the same
    ``JSONResponse``), less its check of the dict's type, which it would run in a second
    worker-thread call for a ``def`` handler: one hop fewer beside the loop that answers ingest."""
    return JSONResponse(_ANSWER.dump_python(result, mode="json"))


def _optional(description: str, alias: str | None = None) -> Any:
    return Annotated[str | None, Query(alias=alias, description=description)]


# Every query parameter of the reports API: its name in the URL -> (argument name, declaration).
PARAMETERS: dict[str, tuple[str, Any]] = {
    "dimension": ("dimension", _optional("pages, entry_pages, sources, ... (docs/reports.md)")),
    "limit": ("limit", _optional("Rows, 1 to 100 (default 10)")),
    "name": (
        "name",
        _optional(
            "The custom event, with dimension=props; the missing path, with not_found_referrers; "
            "the page's path, with clicked_elements"
        ),
    ),
    "path": ("path", _optional("The page's path (required)")),
    "viewport": (
        "viewport",
        _optional("Only clicks in windows of this width: desktop (992 px and up), tablet or phone"),
    ),
    "offset": ("offset", _optional("Rows to skip, 0 to 100000 (default 0): the next page of a table")),
    "search": ("search", _optional("Only values containing this text (any case), at most 200 characters")),
    "range": ("range", _optional("today, 7d (default), 30d or custom")),
    "from": ("date_from", _optional("First day (YYYY-MM-DD), range=custom", alias="from")),
    "to": ("date_to", _optional("Last day (YYYY-MM-DD), range=custom", alias="to")),
    "compare": ("compare", _optional("true: also the previous period")),
    "imported": ("imported", _optional("false: leave imported history out (default true)")),
    "page": ("page", _optional("Filter: visits that viewed this path (!: did not, ~: a path containing)")),
    "source": ("source", _optional("Filter: visits from this source (!: is not, ~: contains)")),
    "event": ("event", _optional("Filter: visits that sent this custom event (!: did not, ~: containing)")),
    "goal": ("goal", _optional("Filter: visits that converted on this goal id (!: did not)")),
    "prop": ("prop", _optional("Filter: visits with an event whose prop is key:value (!: none)")),
    **{
        name: (
            name,
            _optional(f"Filter: visits whose {name.replace('_', ' ')} is this (!: is not, ~: contains)"),
        )
        for name in (
            "entry_page",
            "exit_page",
            "utm_source",
            "utm_medium",
            "utm_campaign",
            "browser",
            "os",
            "device",
            "country",
            "region",
            "city",
        )
    },
}
SITE_ID = inspect.Parameter(
    "site_id",
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    annotation=Annotated[int, Path(ge=1, le=2**62, description="The site's id.")],
)
REQUEST = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request)


@dataclass(frozen=True)
class Asked:
    """What a reports request asks for: the site and its checked query parameters."""

    site_id: int
    query: params.Query


def asked(documented: tuple[str, ...], allowed: tuple[str, ...] | None = None) -> Any:
    """The dependency of a reports endpoint: the ``documented`` query parameters appear in the
    OpenAPI document in that order; the request may carry those in ``allowed`` (default: the
    documented ones), each at most once."""
    accepted = documented if allowed is None else allowed

    async def dependency(request: Request, site_id: int, **_: str | None) -> Asked:
        return Asked(site_id, params.parse(request.query_params.multi_items(), accepted))

    arguments = [
        inspect.Parameter(
            PARAMETERS[name][0], inspect.Parameter.KEYWORD_ONLY, default=None, annotation=PARAMETERS[name][1]
        )
        for name in documented
    ]
    dependency.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [REQUEST, SITE_ID, *arguments], return_annotation=Asked
    )
    return Depends(dependency)


def _store(ctx: Context) -> Store:
    if ctx.store is None:  # only an application built without its store (never by create_app)
        raise ApiError(503, "store_unavailable", "The analytics store is not running.")
    return ctx.store


def _report(request: Request, report: Asked, kind: str) -> Answer:
    ctx = context(request)
    with ctx.db.read() as conn:
        opened = service.Report.open(conn, owner(request).id, report.site_id, report.query, _store(ctx))
    result: Answer = getattr(opened, kind)()
    return result


PERIOD = asked(params.COMMON)
# The breakdown documents no `compare` (it has no previous period) but accepts one, as it always has.
BREAKDOWN_OF = asked(
    ("dimension", "limit", "offset", "search", "name", "viewport", "range", "from", "to", "imported", *NAMES),
    allowed=(*params.COMMON, "dimension", "limit", "offset", "search", "name", "viewport"),
)
# The heatmap has no previous period and no imported history; it accepts those flags as the
# breakdown does.
HEATMAP_OF = asked(
    ("path", "viewport", "range", "from", "to", *NAMES), allowed=(*params.COMMON, "path", "viewport")
)
NOTHING = asked(())


@router.get(
    "/summary",
    response_model=Answer,
    summary="Visitors, visits, pageviews, bounce rate and visit duration",
    responses=ERRORS,
)
def summary(request: Request, report: Annotated[Asked, PERIOD]) -> JSONResponse:
    return answered(_report(request, report, "summary"))


@router.get(
    "/timeseries", response_model=Answer, summary="The figures hour by hour or day by day", responses=ERRORS
)
def timeseries(request: Request, report: Annotated[Asked, PERIOD]) -> JSONResponse:
    return answered(_report(request, report, "timeseries"))


@router.get("/breakdown", response_model=Answer, summary="Top values of one dimension", responses=ERRORS)
def breakdown(request: Request, report: Annotated[Asked, BREAKDOWN_OF]) -> JSONResponse:
    return answered(_report(request, report, "breakdown"))


@router.get(
    "/vitals",
    response_model=Answer,
    summary="Each web vital's p75 and rating, and how its measurements rate",
    responses=ERRORS,
)
def web_vitals(request: Request, report: Annotated[Asked, PERIOD]) -> JSONResponse:
    return answered(_report(request, report, "web_vitals"))


@router.get(
    "/heatmap",
    response_model=Answer,
    summary="One page's clicks per element and position, and per window width (the heatmap overlay)",
    responses=ERRORS,
)
def heatmap(request: Request, report: Annotated[Asked, HEATMAP_OF]) -> JSONResponse:
    return answered(_report(request, report, "heatmap"))


@router.get("/realtime", response_model=Answer, summary="Visitors in the last 5 minutes", responses=ERRORS)
def realtime(request: Request, report: Annotated[Asked, NOTHING]) -> JSONResponse:
    ctx = context(request)
    with ctx.db.read() as conn:
        site = get_site(conn, owner(request).id, report.site_id)
    return answered(service.realtime_of(site, _store(ctx)))
