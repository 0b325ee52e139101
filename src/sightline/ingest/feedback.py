"""The survey widget's endpoints: the published survey to show, and storing a visitor's answers.

``GET /i/feedback/surveys/{id}?key=KEY[&path=/page]`` and ``POST /i/feedback/responses`` (+ its
``OPTIONS`` preflight). Key, Origin and CORS rules are those of ``/i/config`` and ``/i/events``
(PROTOCOL.md), answered with the same helpers. Every rule about surveys lives in
``sightline.surveys``; a response is answered 202 only after its transaction committed.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any
from urllib.parse import parse_qsl

import orjson
from anyio import to_thread
from sqlalchemy.exc import DBAPIError
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from sightline.database import Database
from sightline.errors import ApiError
from sightline.ingest.beside import RefusedError, SiteEndpoint
from sightline.ingest.http import ClientGoneError, answer, cors, error_payload, request_origin
from sightline.ingest.pipeline import Pipeline
from sightline.numbers import ascii_int
from sightline.surveys import responses

log = logging.getLogger("sightline.ingest")

KEY_MESSAGE = "Give the site's key."


class _Endpoint(SiteEndpoint):
    def __init__(self, pipeline: Pipeline, db: Database) -> None:
        super().__init__(pipeline)
        self.db = db

    def storage_unavailable(self, allowed: str | None) -> RefusedError:
        message = "The survey could not be reached in storage; try again shortly."
        return RefusedError(503, error_payload("storage_unavailable", message), allowed, retry=True)


class SurveyEndpoint(_Endpoint):
    """``GET /i/feedback/surveys/{id}?key=KEY[&path=/page]``: the published revision to show."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            payload = error_payload("method_not_allowed", "This address accepts GET only.")
            await answer(send, 405, payload, [(b"allow", b"GET")])
            return
        origin, _, _ = request_origin(scope)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        try:
            site = await self.authorise(query.get("key"), origin, key_message=KEY_MESSAGE)
            raw_id = str(scope["path_params"].get("survey_id", ""))
            path = query.get("path")
            if path is not None and not path.startswith("/"):
                message = "The field 'path' is the page path, starting with '/'."
                raise RefusedError(422, error_payload("invalid_field", message, "path"), origin)
            survey_id = ascii_int(raw_id, 1, 2**62)
            if survey_id is None:
                message = "No published survey with that id exists for this site."
                raise RefusedError(404, error_payload("unknown_survey", message), origin)
            shown = await to_thread.run_sync(self._load, site.id, survey_id, path, origin)
        except RefusedError as refusal:
            await refusal.send(send)
            return
        await answer(send, 200, shown, cors(origin))

    def _load(self, site_id: int, survey_id: int, path: str | None, origin: str | None) -> dict[str, Any]:
        try:
            with self.db.read() as conn:
                return responses.shown_survey(conn, site_id, survey_id, path)
        except ApiError as exc:
            raise RefusedError.of(exc, origin) from None
        except DBAPIError:
            log.exception("reading survey %s failed", survey_id)
            raise self.storage_unavailable(origin) from None


class ResponsesEndpoint(_Endpoint):
    """``POST /i/feedback/responses``: one visitor's answers, stored once per ``response_id``."""

    def __init__(self, pipeline: Pipeline, db: Database, counts: Counter[str] | None = None) -> None:
        super().__init__(pipeline, db)
        # "stored", "duplicate", and "refused:<code>" (read by /metrics)
        self.counts: Counter[str] = Counter() if counts is None else counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await self.answered_other_than_post(scope, send):
            return
        origin, _, length = request_origin(scope)
        try:
            body = await self._read(receive, origin, length)
            site = await self.authorise(body.get("key"), origin, key_message=KEY_MESSAGE)
            self.refuse_when_disk_full(origin)
            try:
                submission = responses.check_submission(body)
            except ApiError as exc:
                raise RefusedError.of(exc, origin) from None
            stored = await to_thread.run_sync(self._store, site.id, submission, origin)
        except ClientGoneError:
            return
        except RefusedError as refusal:
            self.counts["refused:" + refusal.code] += 1
            await refusal.send(send)
            return
        self.counts["stored" if stored else "duplicate"] += 1
        payload = {"response_id": submission.response_id, "stored": stored}
        await answer(send, 202, payload, cors(origin))

    async def _read(self, receive: Receive, origin: str | None, length: int | None) -> dict[str, Any]:
        raw = await self.read_capped(receive, origin, length, responses.BODY_LIMIT, site_known=False)
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            message = "The body is not valid JSON."
            raise RefusedError(
                400, error_payload("malformed_json", message), await self.known_origin(origin)
            ) from None
        if not isinstance(body, dict):
            message = "The body is a JSON object."
            payload = error_payload("invalid_field", message, "body")
            raise RefusedError(422, payload, await self.known_origin(origin))
        return body

    def _store(self, site_id: int, submission: responses.Submission, origin: str | None) -> bool:
        try:
            with self.db.begin() as conn:
                return responses.store_response(conn, site_id, submission)
        except ApiError as exc:
            raise RefusedError.of(exc, origin) from None
        except DBAPIError:
            log.exception("storing a response to survey %s failed", submission.survey_id)
            raise self.storage_unavailable(origin) from None


def routes(pipeline: Pipeline, db: Database, counts: Counter[str] | None = None) -> list[BaseRoute]:
    """The widget's routes, for ``app.create_app`` to put beside ingest's; ``counts`` gets the
    responses' outcomes."""
    return [
        Route("/i/feedback/surveys/{survey_id}", SurveyEndpoint(pipeline, db)),
        Route("/i/feedback/responses", ResponsesEndpoint(pipeline, db, counts)),
    ]
