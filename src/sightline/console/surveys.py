"""Feedback surveys for the owner: create, list, read, edit, publish, archive, a summary of the
responses, and CSV export."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from sightline.console.deps import context, owner
from sightline.console.ids import QuerySiteId, Revision, SurveyId
from sightline.console.schemas import EmptyBody
from sightline.surveys import export, service, summary

router = APIRouter(prefix="/api/feedback/surveys", tags=["surveys"])


@router.get("", summary="List surveys, of one site or of all your sites", responses={404: {}, 422: {}})
def list_surveys(request: Request, site_id: QuerySiteId = None) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return {"surveys": service.list_surveys(conn, owner(request).id, site_id)}


@router.post("", summary="Create a draft survey", status_code=201, responses={404: {}, 422: {}})
def create_survey(body: dict[str, Any], request: Request) -> JSONResponse:
    with context(request).db.begin() as conn:
        row = service.create_survey(conn, owner(request).id, body)
        survey = service.public_survey(conn, row)
    return JSONResponse(survey, status_code=201)


@router.get("/{survey_id}", summary="Read a survey", responses={404: {}})
def get_survey(survey_id: SurveyId, request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return service.public_survey(conn, service.get_survey(conn, owner(request).id, survey_id))


@router.patch(
    "/{survey_id}",
    summary="Edit a survey (opens the next draft revision)",
    responses={404: {}, 409: {}, 422: {}},
)
def patch_survey(survey_id: SurveyId, body: dict[str, Any], request: Request) -> dict[str, Any]:
    with context(request).db.begin() as conn:
        row = service.update_survey(conn, owner(request).id, survey_id, body)
        return service.public_survey(conn, row)


@router.post(
    "/{survey_id}/publish", summary="Publish the pending draft revision", responses={404: {}, 409: {}}
)
def publish_survey(survey_id: SurveyId, request: Request, body: EmptyBody | None = None) -> dict[str, Any]:
    with context(request).db.begin() as conn:
        row = service.publish_survey(conn, owner(request).id, survey_id)
        return service.public_survey(conn, row)


@router.post("/{survey_id}/archive", summary="Stop showing a survey to visitors", responses={404: {}})
def archive_survey(survey_id: SurveyId, request: Request, body: EmptyBody | None = None) -> dict[str, Any]:
    with context(request).db.begin() as conn:
        row = service.archive_survey(conn, owner(request).id, survey_id)
        return service.public_survey(conn, row)


@router.get("/{survey_id}/revisions/{revision}", summary="Read one revision", responses={404: {}})
def get_revision(survey_id: SurveyId, revision: Revision, request: Request) -> dict[str, Any]:
    with context(request).db.read() as conn:
        return service.get_revision(conn, owner(request).id, survey_id, revision)


@router.get(
    "/{survey_id}/summary",
    summary="Summarize one revision's responses question by question",
    responses={404: {}, 422: {}},
)
def summarize_responses(
    survey_id: SurveyId,
    request: Request,
    revision: Annotated[str | None, Query(description="Revision; default: latest with responses.")] = None,
) -> dict[str, Any]:
    wanted_revision = export.parse_revision(revision)
    with context(request).db.read() as conn:
        return summary.summarize(conn, owner(request).id, survey_id, wanted_revision)


@router.get(
    "/{survey_id}/export",
    summary="Export one batch of up to 1000 responses of one revision as CSV",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {}}}, 404: {}, 422: {}},
)
def export_responses(
    survey_id: SurveyId,
    request: Request,
    revision: Annotated[str | None, Query(description="Revision; default: latest with responses.")] = None,
    offset: Annotated[str | None, Query(description="Start position, 0 to 100000; default 0.")] = None,
) -> StreamingResponse:
    ctx = context(request)
    wanted_revision = export.parse_revision(revision)
    start = export.parse_offset(offset)
    with ctx.db.read() as conn:
        plan = export.plan_export(conn, owner(request).id, survey_id, wanted_revision, start)
    headers = {"Content-Disposition": f'attachment; filename="{plan.filename}"'}
    if plan.next_offset is not None:
        query = f"revision={plan.revision}&offset={plan.next_offset}"
        link = f"{ctx.origin}/api/feedback/surveys/{survey_id}/export?{query}"
        headers["Link"] = f'<{link}>; rel="next"'
    return StreamingResponse(
        export.stream_csv(ctx.db, plan), media_type="text/csv; charset=utf-8", headers=headers
    )
