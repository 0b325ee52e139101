"""Conversion reports (funnel, retention, journeys) and saved funnels and segments (thin handlers).

The reports take the common report parameters and filters (``reports.params``) plus their own,
which are taken off the request before the common ones are checked: ``step`` (repeated),
``funnel`` and ``dimension`` for a funnel, ``interval`` and ``periods`` for retention, ``from``
(a step: ``page:/x`` or ``event:y``; a date ``from`` of a custom range may be given beside it),
``direction`` and ``depth`` for journeys.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from sightline.console.deps import context, owner
from sightline.console.ids import Id as ItemId
from sightline.console.ids import SiteId
from sightline.console.reports import open_report
from sightline.errors import ApiError
from sightline.numbers import ascii_int
from sightline.reports import params, saved, service
from sightline.reports.conversions import (
    FUNNEL_DIMENSIONS,
    FUNNEL_NAMES,
    MAX_PERIODS,
    funnel_report,
    journeys_report,
    retention_report,
)
from sightline.reports.steps import Step, parse_step

router = APIRouter(tags=["conversions"])
reports = APIRouter(prefix="/api/sites/{site_id}/reports", tags=["reports"])

Text = Annotated[str | None, Query()]
ERRORS: dict[int | str, dict[str, Any]] = {404: {}, 422: {}}


def _bad(name: str, message: str) -> ApiError:
    return ApiError(422, "invalid_parameter", message, field=name)


def _split(request: Request, own: tuple[str, ...]) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    mine: dict[str, list[str]] = {}
    rest = []
    for name, value in request.query_params.multi_items():
        step_from = "from" in own and name == "from" and value.startswith(("page:", "event:"))
        if (name in own and name != "from") or step_from:
            mine.setdefault(name, []).append(value)
        else:
            rest.append((name, value))
    for name, values in mine.items():
        if len(values) > 1 and name != "step":
            raise _bad(name, f"The parameter '{name}' is given more than once.")
    return mine, rest


def _open(request: Request, site_id: int, rest: list[tuple[str, str]]) -> service.Report:
    return open_report(request, site_id, params.parse(rest, params.COMMON))


@reports.get("/funnel", summary="Visitors through 2 to 8 steps, in order within a visit", responses=ERRORS)
def funnel(
    request: Request,
    site_id: SiteId,
    step: Annotated[list[str] | None, Query(description="page:/path or event:name, 2 to 8 times")] = None,
    funnel: Annotated[str | None, Query(description="A saved funnel's id instead of steps")] = None,
    dimension: Annotated[
        str | None, Query(description="Split by: " + ", ".join(FUNNEL_NAMES) + " (plural aliases too)")
    ] = None,
) -> dict[str, Any]:
    mine, rest = _split(request, ("step", "funnel", "dimension"))
    report = _open(request, site_id, rest)
    steps: list[Step]
    if "funnel" in mine:
        if "step" in mine:
            raise _bad("step", "Give either steps or a saved funnel, not both.")
        funnel_id = ascii_int(mine["funnel"][0], 1, 2**62)
        if funnel_id is None:
            raise _bad("funnel", "The parameter 'funnel' is a saved funnel's id.")
        with context(request).db.read() as conn:
            row = saved.get_saved(saved.FUNNELS, conn, owner(request).id, funnel_id)
        if row["site_id"] != site_id:
            raise ApiError(404, "not_found", "No funnel with that id exists.")
        steps = [parse_step("funnel", raw) for raw in orjson.loads(row["steps"])]
    else:
        steps = [parse_step("step", raw) for raw in mine.get("step", [])]
        if not saved.MIN_STEPS <= len(steps) <= saved.MAX_STEPS:
            raise _bad("step", f"A funnel has {saved.MIN_STEPS} to {saved.MAX_STEPS} 'step' parameters.")
    split = mine.get("dimension", [None])[0]
    if split is not None and split not in FUNNEL_DIMENSIONS:
        raise _bad("dimension", "The parameter 'dimension' is one of " + ", ".join(FUNNEL_NAMES) + ".")
    return funnel_report(report, steps, split)


@reports.get("/retention", summary="Cohorts by first visit and the share returning", responses=ERRORS)
def retention(
    request: Request,
    site_id: SiteId,
    interval: Annotated[str | None, Query(description="week (default) or day")] = None,
    periods: Annotated[
        str | None, Query(description=f"Periods per cohort, 1 to {MAX_PERIODS} (default 8)")
    ] = None,
) -> dict[str, Any]:
    mine, rest = _split(request, ("interval", "periods"))
    report = _open(request, site_id, rest)
    chosen = mine.get("interval", ["week"])[0]
    if chosen not in ("week", "day"):
        raise _bad("interval", "The parameter 'interval' is week or day.")
    count = ascii_int(mine.get("periods", ["8"])[0], 1, MAX_PERIODS)
    if count is None:
        raise _bad("periods", f"The parameter 'periods' is a whole number from 1 to {MAX_PERIODS}.")
    return retention_report(report, chosen, count)


@reports.get(
    "/journeys", summary="The most common next or previous steps from a page or event", responses=ERRORS
)
def journeys(
    request: Request,
    site_id: SiteId,
    direction: Annotated[str | None, Query(description="next (default) or previous")] = None,
    depth: Annotated[str | None, Query(description="Steps, 1 to 3 (default 3)")] = None,
) -> dict[str, Any]:
    mine, rest = _split(request, ("from", "direction", "depth"))
    report = _open(request, site_id, rest)
    if "from" not in mine:
        raise _bad("from", "The parameter 'from' (page:/path or event:name) is required.")
    start = parse_step("from", mine["from"][0])
    way = mine.get("direction", ["next"])[0]
    if way not in ("next", "previous"):
        raise _bad("direction", "The parameter 'direction' is next or previous.")
    deep = ascii_int(mine.get("depth", ["3"])[0], 1, 3)
    if deep is None:
        raise _bad("depth", "The parameter 'depth' is 1, 2 or 3.")
    return journeys_report(report, start, way, deep)


def _crud(kind: saved.Kind, plural: str) -> None:
    noun = kind.noun

    @router.get(f"/api/sites/{{site_id}}/{plural}", summary=f"The site's saved {plural}", responses={404: {}})
    def list_items(site_id: SiteId, request: Request) -> dict[str, Any]:
        with context(request).db.read() as conn:
            return {plural: saved.list_saved(kind, conn, owner(request).id, site_id)}

    @router.post(
        f"/api/sites/{{site_id}}/{plural}",
        summary=f"Save a {noun}",
        status_code=201,
        responses={404: {}, 409: {}, 422: {}},
    )
    def create_item(site_id: SiteId, body: dict[str, Any], request: Request) -> JSONResponse:
        with context(request).db.begin() as conn:
            item = saved.create_saved(kind, conn, owner(request).id, site_id, body)
        return JSONResponse(item, status_code=201)

    @router.patch(
        f"/api/{plural}/{{item_id}}", summary=f"Change a saved {noun}", responses={404: {}, 409: {}, 422: {}}
    )
    def patch_item(item_id: ItemId, body: dict[str, Any], request: Request) -> dict[str, Any]:
        with context(request).db.begin() as conn:
            return saved.update_saved(kind, conn, owner(request).id, item_id, body)

    @router.delete(
        f"/api/{plural}/{{item_id}}", summary=f"Delete a saved {noun}", status_code=204, responses={404: {}}
    )
    def delete_item(item_id: ItemId, request: Request) -> Response:
        with context(request).db.begin() as conn:
            saved.delete_saved(kind, conn, owner(request).id, item_id)
        return Response(status_code=204)

    for handler in (list_items, create_item, patch_item, delete_item):
        handler.__name__ = f"{handler.__name__.replace('item', noun)}"


_crud(saved.FUNNELS, "funnels")
_crud(saved.SEGMENTS, "segments")
