"""The visitor side of surveys: the published definition the widget shows, and storing answers.

A response names the survey, the revision it was shown from, a client-generated ``response_id``
(the idempotency key: a retry stores nothing new) and answers keyed by question id. Answers are
checked against that revision's questions; any problem is a 422 naming the field and nothing is
stored. The caller commits before it acknowledges.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection, insert, select
from sqlalchemy.exc import IntegrityError

from sightline.database.tables.surveys import survey_responses, survey_revisions, surveys
from sightline.database.types import utcnow
from sightline.errors import ApiError
from sightline.numbers import is_id
from sightline.surveys.definition import SCALES
from sightline.surveys.targeting import is_targeted

RESPONSE_ID = re.compile(r"\A[A-Za-z0-9_-]{16,64}\Z")
VISITOR_MAX = 200
PATH_MAX = 2000
# Everything one response may carry: 20 text answers of 2000 characters, JSON-escaped, fit.
BODY_LIMIT = 256 * 1024
LOOKUP_CHUNK = 500


def _invalid(field: str, message: str, code: str = "invalid_field") -> ApiError:
    return ApiError(422, code, message, field=field)


def _unknown_survey() -> ApiError:
    return ApiError(404, "unknown_survey", "No published survey with that id exists for this site.")


def _has_control(value: str, allowed: str = "") -> bool:
    return any((ord(ch) < 32 or ord(ch) == 127) and ch not in allowed for ch in value)


@dataclass(frozen=True)
class Submission:
    survey_id: int
    revision: int
    response_id: str
    visitor_id: str
    page_path: str
    answers: Mapping[str, Any]


def _positive(body: Mapping[str, Any], field: str) -> int:
    value = body.get(field)
    if not is_id(value):
        raise _invalid(field, f"The field '{field}' is a positive whole number.")
    return value


def check_submission(body: Mapping[str, Any]) -> Submission:
    """The shape of a response body (``key`` is the caller's); answers are checked on storing.

    Unknown top-level fields are ignored, as on ``/i/events``, so a newer widget can talk to an
    older server; unknown question ids inside ``answers`` are refused.
    """
    response_id = body.get("response_id")
    if not isinstance(response_id, str) or not RESPONSE_ID.match(response_id):
        raise _invalid("response_id", "The field 'response_id' is 16 to 64 letters, digits, '_' or '-'.")
    visitor_id = body.get("visitor_id")
    if not isinstance(visitor_id, str) or not 1 <= len(visitor_id) <= VISITOR_MAX or _has_control(visitor_id):
        raise _invalid("visitor_id", f"The field 'visitor_id' is a string of 1 to {VISITOR_MAX} characters.")
    path = body.get("page_path")
    if not isinstance(path, str) or not path.startswith("/") or len(path) > PATH_MAX or _has_control(path):
        raise _invalid("page_path", f"The field 'page_path' is a path starting with '/', at most {PATH_MAX}.")
    answers = body.get("answers")
    if not isinstance(answers, Mapping):
        raise _invalid("answers", "The field 'answers' is an object keyed by question id.")
    return Submission(
        survey_id=_positive(body, "survey_id"),
        revision=_positive(body, "revision"),
        response_id=response_id,
        visitor_id=visitor_id,
        page_path=path,
        answers=answers,
    )


def _choice_ids(question: Mapping[str, Any]) -> list[str]:
    return [str(option["id"]) for option in question["options"]]


def _check_answer(question: Mapping[str, Any], value: Any, field: str) -> Any:
    """The stored form of one answer, or None when the visitor left the question unanswered."""
    kind = question["type"]
    if value is None:
        return None
    if kind == "rating":
        low, high = SCALES[question["scale"]]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _invalid(
                field, f"The rating is a whole number from {low} to {high}.", "rating_out_of_scale"
            )
        return value
    if kind == "text":
        if not isinstance(value, str) or _has_control(value, "\n\r\t"):
            raise _invalid(field, "The answer is text without control characters.")
        text = value.strip()
        if len(text) > question["max_length"]:
            raise _invalid(
                field, f"The answer has at most {question['max_length']} characters.", "text_too_long"
            )
        return text or None
    known = _choice_ids(question)
    if kind == "single_choice":
        if not isinstance(value, str) or value not in known:
            raise _invalid(field, "The answer is the id of one of the question's options.", "unknown_option")
        return value
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _invalid(field, "The answer is a list of option ids.")
    for index, item in enumerate(value):
        if item not in known:
            raise _invalid(
                f"{field}.{index}",
                f"The option '{item}' is not one of the question's options.",
                "unknown_option",
            )
    if len(set(value)) != len(value):
        raise _invalid(field, "An option is chosen more than once.")
    chosen = set(value)
    return [option for option in known if option in chosen] or None


def check_answers(questions: list[Mapping[str, Any]], answers: Mapping[str, Any]) -> dict[str, Any]:
    """Answers keyed by question id, in the revision's question order, unanswered ones left out."""
    by_id = {str(q["id"]): q for q in questions}
    for question_id in answers:
        if question_id not in by_id:
            raise _invalid(
                f"answers.{question_id}", f"The survey has no question '{question_id}'.", "unknown_question"
            )
    checked: dict[str, Any] = {}
    for question_id, question in by_id.items():
        field = f"answers.{question_id}"
        value = _check_answer(question, answers.get(question_id), field)
        if value is None and question["required"]:
            raise _invalid(field, f"The question '{question['title']}' needs an answer.", "answer_required")
        if value is not None:
            checked[question_id] = value
    if not checked:
        raise _invalid("answers", "The response answers no question.", "empty_response")
    return checked


def _published_definition(conn: Connection, survey_id: int, revision: int) -> dict[str, Any] | None:
    raw = conn.execute(
        select(survey_revisions.c.definition).where(
            survey_revisions.c.survey_id == survey_id,
            survey_revisions.c.revision == revision,
            survey_revisions.c.published_at.is_not(None),
        )
    ).scalar_one_or_none()
    return None if raw is None else dict(orjson.loads(raw))


def _survey_of_site(conn: Connection, site_id: int, survey_id: int) -> Any:
    row = conn.execute(select(surveys).where(surveys.c.id == survey_id, surveys.c.site_id == site_id)).first()
    if row is None:
        raise _unknown_survey()
    return row


def shown_survey(conn: Connection, site_id: int, survey_id: int, path: str | None) -> dict[str, Any]:
    """What the widget needs to show a survey: its current published revision, for visitors."""
    row = _survey_of_site(conn, site_id, survey_id)
    if row.published_revision is None or row.archived_at is not None:
        raise _unknown_survey()
    definition = _published_definition(conn, survey_id, row.published_revision)
    if definition is None:
        raise _unknown_survey()
    shown: dict[str, Any] = {
        "id": survey_id,
        "revision": row.published_revision,
        "name": definition["name"],
        "accent_color": definition["accent_color"],
        "questions": definition["questions"],
        "targeting": definition["targeting"],
    }
    if path is not None:
        shown["targeted"] = is_targeted(definition["targeting"], path)
    return shown


def _already_stored(conn: Connection, survey_id: int, client_ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(client_ids), LOOKUP_CHUNK):
        chunk = client_ids[start : start + LOOKUP_CHUNK]
        query = select(survey_responses.c.client_id).where(
            survey_responses.c.survey_id == survey_id, survey_responses.c.client_id.in_(chunk)
        )
        found.update(conn.execute(query).scalars())
    return found


def _insert(conn: Connection, rows: list[dict[str, Any]]) -> int:
    """Insert ``rows``; a concurrent duplicate makes the chunk fall back to one row at a time."""
    stored = 0
    for start in range(0, len(rows), LOOKUP_CHUNK):
        chunk = rows[start : start + LOOKUP_CHUNK]
        try:
            with conn.begin_nested():
                conn.execute(insert(survey_responses), chunk)
            stored += len(chunk)
        except IntegrityError:
            for row in chunk:
                try:
                    with conn.begin_nested():
                        conn.execute(insert(survey_responses).values(**row))
                    stored += 1
                except IntegrityError:
                    continue
    return stored


def store_responses(conn: Connection, site_id: int, survey_id: int, batch: Sequence[Submission]) -> int:
    """Store responses to one survey of ``site_id``; returns how many were new.

    A ``response_id`` already stored (a retry) is skipped. Any invalid response raises before
    anything is written, so the caller's transaction stores all or nothing.
    """
    row = _survey_of_site(conn, site_id, survey_id)
    seen = _already_stored(conn, survey_id, [item.response_id for item in batch])
    fresh: dict[str, Submission] = {}
    for item in batch:
        if item.survey_id != survey_id:
            raise _invalid("survey_id", "Every response of a batch answers the same survey.")
        if item.response_id not in seen:
            fresh.setdefault(item.response_id, item)
    if not fresh:
        return 0
    if row.archived_at is not None:
        raise ApiError(409, "survey_archived", "This survey no longer takes responses.")
    definitions: dict[int, dict[str, Any]] = {}
    now = utcnow()
    rows: list[dict[str, Any]] = []
    for item in fresh.values():
        if item.revision not in definitions:
            definition = _published_definition(conn, survey_id, item.revision)
            if definition is None:
                message = "The survey has no published revision with that number."
                raise _invalid("revision", message, "unknown_revision")
            definitions[item.revision] = definition
        answers = check_answers(definitions[item.revision]["questions"], item.answers)
        rows.append(
            {
                "survey_id": survey_id,
                "revision": item.revision,
                "client_id": item.response_id,
                "visitor_id": item.visitor_id,
                "page_path": item.page_path,
                "answers": orjson.dumps(answers).decode(),
                "submitted_at": now,
            }
        )
    return _insert(conn, rows)


def store_response(conn: Connection, site_id: int, submission: Submission) -> bool:
    """Store one response; False when its ``response_id`` was stored before (a retry)."""
    return store_responses(conn, site_id, submission.survey_id, [submission]) == 1
