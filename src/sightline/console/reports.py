"""Reports of a site: summary, time series, breakdowns, web vitals, click heatmaps and realtime
visitors (thin handlers).

Each handler takes one dependency, ``asked(...)``: it declares the site id to FastAPI, lists the
query parameters the endpoint documents in the route's OpenAPI entry (``openapi_extra``: FastAPI
does not validate them per request), and returns them checked by ``reports.params``, which looks
at every parameter of the request (unknown and repeated ones too) and answers 422 naming the one
at fault. A bad site id is answered (404) before the query is looked at, as FastAPI validates the
declared site id before it calls the dependency. Handlers return their ``JSONResponse`` themselves
(``answered``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from fastapi.types import DecoratedCallable
from pydantic import TypeAdapter

from sightline import dimensions
from sightline.annotations import service as notes
from sightline.channels import CHANNELS
from sightline.console.deps import context, owner
from sightline.console.ids import SiteId
from sightline.reports import params, service
from sightline.reports.filters import NAMES
from sightline.sites.service import get_site

router = APIRouter(prefix="/api/sites/{site_id}/reports", tags=["reports"])

ERRORS: dict[int | str, dict[str, Any]] = {404: {}, 422: {}}
Answer = dict[str, Any]  # each endpoint's documented answer (``response_model``)
_ANSWER = TypeAdapter(Answer)


def answered(result: Answer) -> JSONResponse:
    """The answer as FastAPI renders a handler's dict (the same pydantic conversion, the same
    ``JSONResponse``), less its check of the dict's type, which it would run in a second
    worker-thread call for a ``def`` handler: one hop fewer beside the loop that answers ingest."""
    return JSONResponse(_ANSWER.dump_python(result, mode="json"))


# A filter's description, by what its values are (``sightline.dimensions``).
_FILTER_DOCS = {
    dimensions.PATH: "Filter: visits whose {label} is this path (!: is not, ~: a path containing)",
    dimensions.EVENT: "Filter: visits that sent this custom event (!: did not, ~: containing)",
    dimensions.GOAL: "Filter: visits that converted on this goal id (!: did not)",
    dimensions.PROP: "Filter: visits with an event whose prop is key:value (!: none)",
    dimensions.CHANNEL: "Filter: visits of this channel: "
    + ", ".join(CHANNELS)
    + " (!: is not, ~: contains)",
}


def _filter_doc(dimension: dimensions.Dimension) -> str:
    if dimension.name == "page":
        return "Filter: visits that viewed this path (!: did not, ~: a path containing)"
    default = "Filter: visits whose {label} is this (!: is not, ~: contains)"
    return _FILTER_DOCS.get(dimension.values, default).format(label=dimension.label.lower())


# Every query parameter of the reports API: its name in the URL -> its description.
PARAMETERS: dict[str, str] = {
    "dimension": ", ".join(params.BREAKDOWNS) + " (docs/reports.md; the plural names are aliases)",
    "limit": "Rows, 1 to 100 (default 10)",
    "name": (
        "The custom event, with dimension=props; the missing path, with not_found_referrers; "
        "the page's path, with clicked_elements"
    ),
    "path": "The page's path (required)",
    "viewport": "Only clicks in windows of this width: desktop (992 px and up), tablet or phone",
    "offset": "Rows to skip, 0 to 100000 (default 0): the next page of a table",
    "search": "Only values containing this text (any case), at most 200 characters",
    "range": "today, 7d (default), 30d or custom",
    "from": "First day (YYYY-MM-DD), range=custom",
    "to": "Last day (YYYY-MM-DD), range=custom",
    "compare": "true: also the previous period",
    "imported": "false: leave imported history out (default true)",
    **{d.name: _filter_doc(d) for d in dimensions.supporting(dimensions.FILTER)},
}


def parameter_doc(name: str) -> dict[str, Any]:
    """A query parameter as the OpenAPI document lists it (an optional string, as FastAPI writes
    one declared ``Annotated[str | None, Query(description=...)] = None``)."""
    description = PARAMETERS[name]
    schema = {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": description,
        "title": name.title().replace("_", " "),
    }
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


SITE_ID = inspect.Parameter(
    "site_id",
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    annotation=SiteId,
)
REQUEST = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request)


@dataclass(frozen=True)
class Asked:
    """What a reports request asks for: the site and its checked query parameters."""

    site_id: int
    query: params.Query


@dataclass(frozen=True)
class Asking:
    """A reports endpoint's dependency (``depends``) and its query parameters' documentation
    (``openapi``, the route's ``openapi_extra``)."""

    depends: Any
    documented: tuple[str, ...]

    @property
    def openapi(self) -> dict[str, Any]:
        return {"parameters": [parameter_doc(name) for name in self.documented]}


def asked(documented: tuple[str, ...], allowed: tuple[str, ...] | None = None) -> Asking:
    """The dependency of a reports endpoint: the ``documented`` query parameters appear in the
    OpenAPI document in that order (through ``openapi``: FastAPI does not validate them, which
    cost a quarter of a report request's interpreter time; ``reports.params`` checks them all);
    the request may carry those in ``allowed`` (default: the documented ones), each at most once."""
    accepted = documented if allowed is None else allowed

    async def dependency(request: Request, site_id: int) -> Asked:
        return Asked(site_id, params.parse(request.query_params.multi_items(), accepted))

    dependency.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [REQUEST, SITE_ID], return_annotation=Asked
    )
    return Asking(Depends(dependency), documented)


def open_report(request: Request, site_id: int, query: params.Query) -> service.Report:
    """The report of ``query`` on the asker's site ``site_id`` (404 when it is not theirs)."""
    ctx = context(request)
    with ctx.db.read() as conn:
        return service.Report.open(conn, owner(request).id, site_id, query, ctx.store)


def report_answer(request: Request, report: Asked, kind: str) -> Answer:
    """The answer of the report ``kind`` (``summary``, ``breakdown``, ...) to what was asked."""
    result: Answer = getattr(open_report(request, report.site_id, report.query), kind)()
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


def _route(path: str, summary: str, asking: Asking) -> Callable[[DecoratedCallable], DecoratedCallable]:
    """A reports endpoint's route: its answer documented as an object, its errors, its query
    parameters."""
    return router.get(
        path, response_model=Answer, summary=summary, responses=ERRORS, openapi_extra=asking.openapi
    )


@_route("/summary", "Visitors, visits, pageviews, bounce rate and visit duration", PERIOD)
def summary(request: Request, report: Annotated[Asked, PERIOD.depends]) -> JSONResponse:
    return answered(report_answer(request, report, "summary"))


@_route("/timeseries", "The figures hour by hour or day by day", PERIOD)
def timeseries(request: Request, report: Annotated[Asked, PERIOD.depends]) -> JSONResponse:
    result = report_answer(request, report, "timeseries")
    span = result["range"]
    with context(request).db.read() as conn:
        result["annotations"] = notes.of_period(
            conn, report.site_id, date.fromisoformat(span["from"]), date.fromisoformat(span["to"])
        )
    return answered(result)


@_route("/breakdown", "Top values of one dimension", BREAKDOWN_OF)
def breakdown(request: Request, report: Annotated[Asked, BREAKDOWN_OF.depends]) -> JSONResponse:
    return answered(report_answer(request, report, "breakdown"))


@_route("/vitals", "Each web vital's p75 and rating, and how its measurements rate", PERIOD)
def web_vitals(request: Request, report: Annotated[Asked, PERIOD.depends]) -> JSONResponse:
    return answered(report_answer(request, report, "web_vitals"))


@_route(
    "/heatmap",
    "One page's clicks per element and position, and per window width (the heatmap overlay)",
    HEATMAP_OF,
)
def heatmap(request: Request, report: Annotated[Asked, HEATMAP_OF.depends]) -> JSONResponse:
    return answered(report_answer(request, report, "heatmap"))


@_route("/realtime", "Visitors in the last 5 minutes", NOTHING)
def realtime(request: Request, report: Annotated[Asked, NOTHING.depends]) -> JSONResponse:
    ctx = context(request)
    with ctx.db.read() as conn:
        site = get_site(conn, owner(request).id, report.site_id)
    return answered(service.realtime_of(site, ctx.store))
