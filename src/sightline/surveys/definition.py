"""What a survey definition may hold, checked field by field with a 422 naming the bad field.

A definition is ``{"name", "questions", "targeting", "accent_color"}``; each revision stores one.
Question and option ids are kept when given (so they stay stable across revisions) and generated
when absent. Limits are constants here and listed in docs/surveys.md.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

from sightline.errors import ApiError
from sightline.surveys.targeting import MATCH_KINDS

NAME_MAX = 100
TITLE_MAX = 300
LABEL_MAX = 200
QUESTIONS_MAX = 20
OPTIONS_MIN = 2
OPTIONS_MAX = 20
TEXT_LIMIT = 2000
RULES_MAX = 50
RULE_PATH_MAX = 500
SCALES = {"1-5": (1, 5), "0-10": (0, 10)}
TYPES = ("rating", "single_choice", "multiple_choice", "text")
DEFAULT_ACCENT = "#2563eb"

_ID = re.compile(r"\A[A-Za-z0-9_-]{1,40}\Z")
_COLOUR = re.compile(r"\A#[0-9a-fA-F]{6}\Z")
_TYPE_FIELDS = {
    "rating": {"scale"},
    "single_choice": {"options"},
    "multiple_choice": {"options"},
    "text": {"max_length"},
}
_COMMON_FIELDS = {"id", "type", "title", "required"}


def invalid(field: str, message: str, code: str = "invalid_field") -> ApiError:
    return ApiError(422, code, message, field=field)


def _unknown(field: str, what: str = "") -> ApiError:
    return invalid(field, f"The field '{field}' is not accepted{what}.", "unknown_field")


def check_object(raw: object, field: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise invalid(field, f"The field '{field}' must be an object.")
    return raw


def check_text(raw: object, field: str, limit: int) -> str:
    """A one-line, non-empty text of at most ``limit`` characters, trimmed."""
    if not isinstance(raw, str) or not raw.strip():
        raise invalid(field, f"The field '{field}' must be a non-empty string.")
    value = raw.strip()
    if len(value) > limit:
        raise invalid(field, f"The field '{field}' has at most {limit} characters.")
    if any(ord(ch) < 32 or ord(ch) == 127 or 0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise invalid(field, f"The field '{field}' may not contain control characters or line breaks.")
    return value


def check_name(raw: object) -> str:
    return check_text(raw, "name", NAME_MAX)


def check_accent(raw: object) -> str:
    if not isinstance(raw, str) or not _COLOUR.match(raw):
        raise invalid("accent_color", "The accent colour is a hex colour such as #2563eb.")
    return raw.lower()


def _check_id(raw: object, field: str, prefix: str) -> str:
    if raw is None:
        return f"{prefix}_{secrets.token_hex(4)}"
    if not isinstance(raw, str) or not _ID.match(raw):
        raise invalid(field, f"The field '{field}' is 1 to 40 letters, digits, '_' or '-'.")
    return raw


def _check_options(raw: object, field: str) -> list[dict[str, str]]:
    if not isinstance(raw, list) or not OPTIONS_MIN <= len(raw) <= OPTIONS_MAX:
        raise invalid(field, f"The field '{field}' is a list of {OPTIONS_MIN} to {OPTIONS_MAX} options.")
    options: list[dict[str, str]] = []
    ids: set[str] = set()
    labels: set[str] = set()
    for index, item in enumerate(raw):
        where = f"{field}.{index}"
        entry = check_object(item, where)
        for key in entry:
            if key not in {"id", "label"}:
                raise _unknown(f"{where}.{key}")
        option_id = _check_id(entry.get("id"), f"{where}.id", "o")
        label = check_text(entry.get("label"), f"{where}.label", LABEL_MAX)
        if option_id in ids:
            raise invalid(f"{where}.id", f"The option id '{option_id}' is used twice.", "duplicate_id")
        if label in labels:
            raise invalid(f"{where}.label", f"The option label '{label}' is used twice.", "duplicate_label")
        ids.add(option_id)
        labels.add(label)
        options.append({"id": option_id, "label": label})
    return options


def _check_question(raw: object, field: str, earlier_types: Mapping[str, str]) -> dict[str, Any]:
    entry = check_object(raw, field)
    kind = entry.get("type")
    if kind not in TYPES:
        raise invalid(f"{field}.type", f"The field '{field}.type' is one of {', '.join(TYPES)}.")
    allowed = _COMMON_FIELDS | _TYPE_FIELDS[kind]
    for key in entry:
        if key not in allowed:
            raise _unknown(f"{field}.{key}", f" for {kind} questions")
    question_id = _check_id(entry.get("id"), f"{field}.id", "q")
    if earlier_types.get(question_id, kind) != kind:
        raise invalid(
            f"{field}.type",
            f"The question '{question_id}' was a {earlier_types[question_id]} question in a published "
            "revision; add a new question instead of changing its type.",
            "question_type_changed",
        )
    required = entry.get("required", False)
    if not isinstance(required, bool):
        raise invalid(f"{field}.required", f"The field '{field}.required' must be true or false.")
    question: dict[str, Any] = {
        "id": question_id,
        "type": kind,
        "title": check_text(entry.get("title"), f"{field}.title", TITLE_MAX),
        "required": required,
    }
    if kind == "rating":
        scale = entry.get("scale", "1-5")
        if scale not in SCALES:
            raise invalid(f"{field}.scale", f'The field \'{field}.scale\' is "1-5" or "0-10".')
        question["scale"] = scale
    elif kind == "text":
        limit = entry.get("max_length", TEXT_LIMIT)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= TEXT_LIMIT:
            raise invalid(f"{field}.max_length", f"The field '{field}.max_length' is 1 to {TEXT_LIMIT}.")
        question["max_length"] = limit
    else:
        question["options"] = _check_options(entry.get("options"), f"{field}.options")
    return question


def check_questions(raw: object, earlier_types: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The normalised question list; ``earlier_types`` maps ids of published questions to types."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= QUESTIONS_MAX:
        raise invalid("questions", f"The field 'questions' is a list of 1 to {QUESTIONS_MAX} questions.")
    questions: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        question = _check_question(item, f"questions.{index}", earlier_types or {})
        if question["id"] in seen:
            raise invalid(
                f"questions.{index}.id", f"The question id '{question['id']}' is used twice.", "duplicate_id"
            )
        seen.add(question["id"])
        questions.append(question)
    return questions


def _check_rule(raw: object, field: str) -> dict[str, str]:
    entry = check_object(raw, field)
    for key in entry:
        if key not in {"match", "path"}:
            raise _unknown(f"{field}.{key}")
    kind = entry.get("match")
    if kind not in MATCH_KINDS:
        raise invalid(f"{field}.match", f"The field '{field}.match' is one of {', '.join(MATCH_KINDS)}.")
    path = entry.get("path")
    where = f"{field}.path"
    if not isinstance(path, str) or not path.startswith("/") or len(path) > RULE_PATH_MAX:
        raise invalid(
            where, f"The field '{where}' is a page path starting with '/', at most {RULE_PATH_MAX}."
        )
    if (
        any(ch.isspace() or ord(ch) < 32 or 0xD800 <= ord(ch) <= 0xDFFF for ch in path)
        or "?" in path
        or "#" in path
    ):
        raise invalid(where, f"The field '{where}' is a path only: no spaces, query string or fragment.")
    if "*" in path and kind != "glob":
        raise invalid(where, f"The field '{where}' contains '*'; use \"match\": \"glob\" for wildcards.")
    return {"match": str(kind), "path": path}


def check_targeting(raw: object) -> dict[str, list[dict[str, str]]]:
    entry = check_object(raw, "targeting")
    for key in entry:
        if key not in {"include", "exclude"}:
            raise _unknown(f"targeting.{key}")
    targeting: dict[str, list[dict[str, str]]] = {}
    for side in ("include", "exclude"):
        rules = entry.get(side, [])
        field = f"targeting.{side}"
        if not isinstance(rules, list) or len(rules) > RULES_MAX:
            raise invalid(field, f"The field '{field}' is a list of at most {RULES_MAX} rules.")
        targeting[side] = [_check_rule(rule, f"{field}.{index}") for index, rule in enumerate(rules)]
    return targeting


AUTO_OPEN_MAX_DELAY = 600


def check_auto_open(raw: object) -> dict[str, int] | None:
    """``null`` (the survey opens only through ``analytics.feedback(id)``), or
    ``{"delay_seconds": 0..600}``: the SDK opens it by itself that long after a targeted page loads."""
    if raw is None:
        return None
    entry = check_object(raw, "auto_open")
    for key in entry:
        if key != "delay_seconds":
            raise _unknown(f"auto_open.{key}")
    delay = entry.get("delay_seconds", 0)
    if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= AUTO_OPEN_MAX_DELAY:
        message = f"The delay is a whole number of seconds from 0 to {AUTO_OPEN_MAX_DELAY}."
        raise invalid("auto_open.delay_seconds", message)
    return {"delay_seconds": delay}


EDITABLE = ("name", "questions", "targeting", "accent_color", "auto_open")


def check_changes(
    body: Mapping[str, Any], base: Mapping[str, Any], earlier_types: Mapping[str, str]
) -> dict[str, Any]:
    """``base`` (a definition) with the fields of ``body`` applied, each checked."""
    for key in body:
        if key not in EDITABLE:
            raise _unknown(key, " here")
    definition = dict(base)
    if "name" in body:
        definition["name"] = check_name(body["name"])
    if "questions" in body:
        definition["questions"] = check_questions(body["questions"], earlier_types)
    if "targeting" in body:
        definition["targeting"] = check_targeting(body["targeting"])
    if "accent_color" in body:
        definition["accent_color"] = check_accent(body["accent_color"])
    if "auto_open" in body:
        definition["auto_open"] = check_auto_open(body["auto_open"])
    return definition


def new_definition(body: Mapping[str, Any]) -> dict[str, Any]:
    """The first definition of a survey from a create body (site_id already taken out)."""
    for key in ("name", "questions"):
        if key not in body:
            raise invalid(key, f"The field '{key}' is required.", "missing_field")
    base = {"targeting": {"include": [], "exclude": []}, "accent_color": DEFAULT_ACCENT}
    return check_changes(body, base, {})
