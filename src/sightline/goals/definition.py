"""A goal as the API receives it, checked field by field: 422 naming the field at fault.

Page goal: ``{"name", "kind": "page", "match": "exact" | "prefix" | "glob", "path"}`` (the path
rules of surveys' targeting). Event goal: ``{"name", "kind": "event", "event", "prop"?: {"key",
"value"}, "revenue"?: {"prop", "currency"}}``: ``prop`` narrows the goal to events whose prop
``key`` equals ``value``; ``revenue`` names the numeric prop that carries each conversion's amount
and its currency (three letters, ISO 4217). Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sightline.errors import ApiError
from sightline.surveys.targeting import MATCH_KINDS

NAME_MAX = 100
EVENT_MAX = 100
PATH_MAX = 2000
VALUE_MAX = 2000
FIELDS = {"name", "kind", "match", "path", "event", "prop", "revenue"}
CURRENCY = re.compile(r"[A-Z]{3}\Z")


def invalid(field: str, message: str) -> ApiError:
    return ApiError(422, "invalid_field", message, field=field)


def _text(raw: Mapping[str, Any], field: str, where: str, max_length: int) -> str:
    value = raw.get(field)
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        raise invalid(where, f"The field '{where}' is text of 1 to {max_length} characters.")
    if any(ord(ch) < 32 or 0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise invalid(where, f"The field '{where}' may not contain control characters.")
    return value.strip() if field == "name" else value


def _object(raw: object, where: str, keys: set[str]) -> Mapping[str, Any]:
    if not isinstance(raw, dict):
        raise invalid(where, f"The field '{where}' is an object with {', '.join(sorted(keys))}.")
    for key in raw:
        if key not in keys:
            raise invalid(f"{where}.{key}", f"The field '{where}.{key}' is not known.")
    return raw


def check_path(path: object, kind: str, where: str = "path") -> str:
    if not isinstance(path, str) or not path.startswith("/") or len(path) > PATH_MAX:
        raise invalid(where, f"The field '{where}' is a page path starting with '/', at most {PATH_MAX}.")
    if any(ch.isspace() or ord(ch) < 32 for ch in path) or "?" in path or "#" in path:
        raise invalid(where, f"The field '{where}' is a path only: no spaces, query string or fragment.")
    if "*" in path and kind != "glob":
        raise invalid(where, f"The field '{where}' contains '*'; use \"match\": \"glob\" for wildcards.")
    return path


def check_goal(raw: object) -> dict[str, Any]:
    """The goals table's values of a goal (everything but ids and time)."""
    if not isinstance(raw, dict):
        raise invalid("body", "The body is a JSON object describing the goal.")
    for key in raw:
        if key not in FIELDS:
            raise invalid(key, f"The field '{key}' is not known.")
    given = {k: v for k, v in raw.items() if v is not None}
    out: dict[str, Any] = dict.fromkeys(
        ("match", "path", "event", "prop_key", "prop_value", "revenue_prop", "currency")
    )
    out["name"] = _text(given, "name", "name", NAME_MAX)
    kind = given.get("kind")
    if kind not in ("page", "event"):
        raise invalid("kind", "The field 'kind' is page or event.")
    out["kind"] = kind
    if kind == "page":
        for other in ("event", "prop", "revenue"):
            if other in given:
                raise invalid(other, f"The field '{other}' belongs to event goals.")
        match = given.get("match")
        if match not in MATCH_KINDS:
            raise invalid("match", f"The field 'match' is one of {', '.join(MATCH_KINDS)}.")
        out["match"] = match
        out["path"] = check_path(given.get("path"), str(match))
        return out
    for other in ("match", "path"):
        if other in given:
            raise invalid(other, f"The field '{other}' belongs to page goals.")
    out["event"] = _text(given, "event", "event", EVENT_MAX)
    if "prop" in given:
        prop = _object(given["prop"], "prop", {"key", "value"})
        out["prop_key"] = _text(prop, "key", "prop.key", EVENT_MAX)
        out["prop_value"] = _text(prop, "value", "prop.value", VALUE_MAX)
    if "revenue" in given:
        revenue = _object(given["revenue"], "revenue", {"prop", "currency"})
        out["revenue_prop"] = _text(revenue, "prop", "revenue.prop", EVENT_MAX)
        currency = revenue.get("currency")
        if not isinstance(currency, str) or not CURRENCY.match(currency.upper()):
            raise invalid(
                "revenue.currency", "The field 'revenue.currency' is a three-letter code (EUR, USD)."
            )
        out["currency"] = currency.upper()
    return out


def public(row: Mapping[str, Any]) -> dict[str, Any]:
    """A goal as the API shows it."""
    out: dict[str, Any] = {
        "id": row["id"],
        "site_id": row["site_id"],
        "name": row["name"],
        "kind": row["kind"],
    }
    if row["kind"] == "page":
        out["match"], out["path"] = row["match"], row["path"]
    else:
        out["event"] = row["event"]
        if row["prop_key"] is not None:
            out["prop"] = {"key": row["prop_key"], "value": row["prop_value"]}
        if row["revenue_prop"] is not None:
            out["revenue"] = {"prop": row["revenue_prop"], "currency": row["currency"]}
    out["created_at"] = row["created_at"].isoformat()
    return out


def merged(current: Mapping[str, Any], changes: object) -> dict[str, Any]:
    """The goal a PATCH describes: the current goal with the changed fields (``null`` removes an
    optional one); a change of kind starts from the name alone."""
    if not isinstance(changes, dict):
        raise invalid("body", "The body is a JSON object with the fields to change.")
    base = {k: v for k, v in public(current).items() if k in FIELDS}
    if "kind" in changes and changes["kind"] != base["kind"]:
        base = {"name": base["name"]}
    return {**base, **changes}
