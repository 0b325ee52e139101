"""``GET /api/health`` and the OpenAPI document, both for signed-in owners only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from sightline import __version__
from sightline.console.deps import context

router = APIRouter(prefix="/api", tags=["service"])


@router.get("/health", summary="Availability of the connected services")
def health(request: Request) -> dict[str, Any]:
    return context(request).health.report(__version__)


@router.get("/openapi.json", summary="This API's OpenAPI document", include_in_schema=False)
def openapi(request: Request) -> dict[str, Any]:
    document: dict[str, Any] = request.app.openapi()
    return document
