"""Exception handlers: every failure leaves in the error shape, never with exception text."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException
from starlette.responses import Response

from sightline.database import Database
from sightline.errors import ApiError, error_response, unavailable_response

log = logging.getLogger("sightline.console")

_STATUS_CODES = {
    404: ("not_found", "There is nothing at this address."),
    405: ("method_not_allowed", "This address does not accept that method."),
    413: ("body_too_large", "The request body is too large."),
}


PARSE_ERROR = "There was an error parsing the body"  # FastAPI's own 400 for a body it cannot decode


def _field_of(location: tuple[object, ...]) -> str:
    parts = [str(p) for p in location if p not in ("body", "query", "path")]
    return ".".join(parts) if parts else "body"


async def on_validation(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"type": "value_error", "loc": ("body",), "msg": "Invalid request."}
    if first.get("type") == "json_invalid":
        return error_response(400, "malformed_json", "The body is not valid JSON.")
    location = tuple(first.get("loc", ()))
    if location[:1] == ("path",):
        return error_response(404, "not_found", "Nothing with that id exists.")
    field = _field_of(location)
    kind = first.get("type", "")
    if field == "body" and kind in {"missing", "model_attributes_type", "dict_type"}:
        return error_response(422, "invalid_body", "The body must be a JSON object.", field="body")
    if kind == "extra_forbidden":
        return error_response(422, "unknown_field", f"The field '{field}' is not accepted here.", field=field)
    if kind == "missing":
        return error_response(422, "missing_field", f"The field '{field}' is required.", field=field)
    message = str(first.get("msg", "is invalid")).removeprefix("Value error, ")
    return error_response(422, "invalid_field", f"The field '{field}' is invalid: {message}.", field=field)


async def on_api_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def on_http_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400 and exc.detail == PARSE_ERROR:  # not UTF-8, or nested too deeply
        return error_response(400, "malformed_json", "The body is not valid JSON.")
    code, message = _STATUS_CODES.get(exc.status_code, ("http_error", "The request could not be handled."))
    if exc.status_code == 413 and isinstance(exc.detail, str):  # web.bodies says which limit
        message = exc.detail
    return error_response(exc.status_code, code, message, headers=exc.headers)


async def on_unexpected(request: Request, exc: Exception) -> Response:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", "Something went wrong on the server; it has been logged.")


async def on_database_error(request: Request, exc: Exception) -> Response:
    """A database that cannot be reached or written is 503 with Retry-After; anything else a 500."""
    db: Database = request.app.state.ctx.db
    if db.note_outage(exc) is not None:
        return unavailable_response()
    return await on_unexpected(request, exc)


def install(app: FastAPI) -> None:
    app.add_exception_handler(sa_exc.DBAPIError, on_database_error)
    app.add_exception_handler(sa_exc.TimeoutError, on_database_error)
    app.add_exception_handler(sa_exc.DisconnectionError, on_database_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(HTTPException, on_http_error)
    app.add_exception_handler(Exception, on_unexpected)
