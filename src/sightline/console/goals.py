"""Goals of a site for the owner: list, create, edit, delete (thin handlers over ``sightline.goals``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from sightline.console.deps import context, owner
from sightline.console.ids import GoalId, SiteId
from sightline.goals import service

router = APIRouter(tags=["goals"])


@router.get("/api/sites/{site_id}/goals", summary="The site's goals", responses={404: {}})
def list_goals(site_id: SiteId, request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return {"goals": service.list_goals(conn, owner(request).id, site_id)}


@router.post(
    "/api/sites/{site_id}/goals", summary="Add a goal", status_code=201, responses={404: {}, 409: {}, 422: {}}
)
def create_goal(site_id: SiteId, body: dict[str, Any], request: Request) -> JSONResponse:
    with context(request).db.begin() as conn:
        goal = service.create_goal(conn, owner(request).id, site_id, body)
    return JSONResponse(goal, status_code=201)


@router.patch("/api/goals/{goal_id}", summary="Change a goal", responses={404: {}, 409: {}, 422: {}})
def patch_goal(goal_id: GoalId, body: dict[str, Any], request: Request) -> dict[str, Any]:
    with context(request).db.begin() as conn:
        return service.update_goal(conn, owner(request).id, goal_id, body)


@router.delete("/api/goals/{goal_id}", summary="Delete a goal", status_code=204, responses={404: {}})
def delete_goal(goal_id: GoalId, request: Request) -> Response:
    with context(request).db.begin() as conn:
        service.delete_goal(conn, owner(request).id, goal_id)
    return Response(status_code=204)
