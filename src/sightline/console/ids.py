"""The one reading of the ids a console request names, shared by the guard and the handlers.

FastAPI, left to itself, reads an ``int`` path or query parameter leniently: ``2.0``, ``+2``,
`` 2``, ``02`` and ``2_0`` are all accepted (the last as 20), and of a repeated query parameter
the last one counts. A guard that read the same text another way could check one site while the
handler served another. So an id is read here, once, in one form only: ASCII digits without a
leading zero, from 1 to ``MAX_ID``. The guard refuses a request naming an id in any other form
before a handler runs (``named_ids``), and the handlers' parameter types (``SiteId`` and the
others) are built on the same reading, so the value a handler receives is the one the guard
checked.

- A path id in another form is 404 ``not_found``, as for any id that names nothing.
- ``?site_id=`` in another form, or given more than once, is 422 ``invalid_field`` naming
  ``site_id``.

Path parameters that are not numbers are listed in ``TEXT_PARAMS``; every other path parameter
of a console route is an id. Imports nothing from the rest of Sightline but ``errors`` and
``numbers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import parse_qsl

from fastapi import Path, Query
from pydantic import BeforeValidator

from sightline.errors import ApiError
from sightline.numbers import MAX_ID

MAX_REVISION = 2**31
# Path parameters of console routes whose value is text, not an id (each route types it itself).
TEXT_PARAMS = frozenset({"recording_id", "visitor_id"})
QUERY_IDS = ("site_id",)  # query parameters naming an object the guard checks


def parse_id(text: object, maximum: int = MAX_ID) -> int | None:
    """``text`` as an id when it is written canonically (``[1-9][0-9]*``, at most ``maximum``)."""
    if type(text) is not str or not 0 < len(text) <= 19 or not text.isascii() or not text.isdigit():
        return None
    if text[0] == "0":
        return None
    value = int(text)
    return value if value <= maximum else None


def _canonical(maximum: int) -> BeforeValidator:
    def check(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value  # already an id (a caller in Python, not a request)
        parsed = parse_id(value, maximum)
        if parsed is None:
            raise ValueError("an id is written as digits only, without a sign, spaces or a leading zero")
        return parsed

    return BeforeValidator(check)


CANONICAL = _canonical(MAX_ID)
SiteId = Annotated[int, Path(ge=1, le=MAX_ID, description="The site's id."), CANONICAL]
SurveyId = Annotated[int, Path(ge=1, le=MAX_ID, description="The survey's id."), CANONICAL]
GoalId = Annotated[int, Path(ge=1, le=MAX_ID, description="The goal's id."), CANONICAL]
ImportId = Annotated[int, Path(ge=1, le=MAX_ID, description="The import's id."), CANONICAL]
ShareId = Annotated[int, Path(ge=1, le=MAX_ID, description="The shared link's id."), CANONICAL]
AnnotationId = Annotated[int, Path(ge=1, le=MAX_ID, description="The note's id."), CANONICAL]
Id = Annotated[int, Path(ge=1, le=MAX_ID, description="The id."), CANONICAL]
Revision = Annotated[
    int, Path(ge=1, le=MAX_REVISION, description="A revision number."), _canonical(MAX_REVISION)
]
QuerySiteId = Annotated[int | None, Query(ge=1, le=MAX_ID), CANONICAL]


@dataclass(frozen=True)
class Named:
    """What a request names: its path parameters (ids as ints, ``TEXT_PARAMS`` as text) and its
    query ids (``?site_id=``), each as the handler will receive it."""

    path: Mapping[str, int | str] = field(default_factory=dict)
    query: Mapping[str, int] = field(default_factory=dict)


def named_ids(path_params: Mapping[str, Any], query_string: bytes) -> Named:
    """The ids a request names, read canonically; raises ``ApiError`` (404 or 422) when one is
    written any other way."""
    path: dict[str, int | str] = {}
    for name, value in path_params.items():
        if name in TEXT_PARAMS:
            path[name] = str(value)
            continue
        parsed = parse_id(value, MAX_REVISION if name == "revision" else MAX_ID)
        if parsed is None:
            raise ApiError(404, "not_found", "Nothing with that id exists.")
        path[name] = parsed
    found: dict[str, int] = {}
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    for name in QUERY_IDS:
        values = [v for k, v in pairs if k == name]
        if len(values) > 1:
            raise ApiError(422, "invalid_field", f"The field '{name}' is given more than once.", field=name)
        if values:
            parsed = parse_id(values[0])
            if parsed is None:
                raise ApiError(
                    422,
                    "invalid_field",
                    f"The field '{name}' is invalid: an id is written as digits only.",
                    field=name,
                )
            found[name] = parsed
    return Named(path, found)
