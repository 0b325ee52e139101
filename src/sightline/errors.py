"""The one error shape every HTTP surface answers with.

``{"error": {"code": "snake_case_code", "message": "human sentence"}}`` plus ``field`` where one
field is at fault. Imports nothing from the rest of Sightline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from starlette.responses import Response


class ApiError(Exception):
    """A failure the client is told about, with its status, code and message."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = dict(headers or {})

    def response(self) -> Response:
        return error_response(self.status, self.code, self.message, field=self.field, headers=self.headers)


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    # Starlette loads only where a response is made: the recordings decoder and ingest's writer
    # processes raise ApiError without answering, and start about 30 ms of CPU sooner without it.
    from starlette.responses import Response

    error = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    return Response(
        orjson.dumps({"error": error}),
        status_code=status,
        media_type="application/json",
        headers=dict(headers or {}),
    )


UNAVAILABLE_CODE = "database_unavailable"
UNAVAILABLE_MESSAGE = "The database cannot be reached or written right now; try again in a few seconds."
UNAVAILABLE_RETRY_AFTER = 5


def unavailable_response() -> Response:
    """503 ``database_unavailable`` with ``Retry-After`` (the class is ``sightline.database.outage``)."""
    return error_response(
        503, UNAVAILABLE_CODE, UNAVAILABLE_MESSAGE, headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER)}
    )


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"No {what} with that id exists.")
