"""The batch body of ``POST /i/events`` (PROTOCOL.md) as msgspec structs: parsing and validation in C.

``decode`` turns the raw body into a ``Batch`` or raises ``BatchError`` with the HTTP answer:
400 ``malformed_json`` or 422 ``invalid_field`` naming the field (``events.3.name``).
Unknown fields are ignored so that a newer SDK can talk to an older server. The structs hold only
strings, numbers and flat dicts, which cannot form reference cycles, so the cyclic garbage
collector does not track them (``gc=False``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from sightline.autocapture.events import RESERVED, problem

MAX_BODY = 64 * 1024
MAX_EVENTS = 20
MAX_PROPS = 30
NAME_MAX = 100
PROP_STRING_MAX = 2000

Str200 = Annotated[str, Meta(max_length=200)]
PropValue = (
    Annotated[str, Meta(max_length=PROP_STRING_MAX)]
    | int  # beyond 64 bits: a float (check_numbers)
    | Annotated[float, Meta(ge=-1.7976931348623157e308, le=1.7976931348623157e308)]
    | bool
)


class Utm(Struct, frozen=True, gc=False):
    source: Str200 | None = None
    medium: Str200 | None = None
    campaign: Str200 | None = None
    term: Str200 | None = None
    content: Str200 | None = None


class Event(Struct, frozen=True, gc=False):
    name: Annotated[str, Meta(min_length=1, max_length=NAME_MAX)]
    visitor_id: Annotated[str, Meta(min_length=1, max_length=200)]
    session_id: Annotated[str, Meta(min_length=1, max_length=64)]
    path: Annotated[str, Meta(min_length=1, max_length=2000)]  # starts with "/": decode checks
    ts: Annotated[float, Meta(ge=0, le=1e15)] | None = None
    url: Annotated[str, Meta(max_length=2000)] = ""
    referrer: Annotated[str, Meta(max_length=2000)] = ""
    props: Annotated[dict[str, PropValue], Meta(max_length=MAX_PROPS)] = {}
    title: Annotated[str, Meta(max_length=500)] | None = None
    utm: Utm | None = None
    screen: Annotated[int, Meta(ge=0, le=100_000)] | None = None
    language: Annotated[str, Meta(max_length=100)] | None = None  # navigator.language


class Batch(Struct, frozen=True, gc=False):
    key: Annotated[str, Meta(min_length=1, max_length=64)]
    batch_id: Annotated[str, Meta(pattern="\\A[A-Za-z0-9_-]{16,64}\\Z")]
    events: Annotated[list[Event], Meta(min_length=1, max_length=MAX_EVENTS)]
    # The client's clock when this attempt left (epoch ms): an event's age is sent_at - ts, so a
    # batch delivered late (after an outage or a reload) keeps its events' times.
    sent_at: Annotated[float, Meta(ge=0, le=1e15)] | None = None


class BatchError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field


_DECODER = msgspec.json.Decoder(Batch)
_AT = re.compile(r"\A(?P<reason>.*?)(?: - at `\$(?P<path>[^`]*)`)?\Z", re.DOTALL)
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]+)`")
_NUL_ESCAPE = b"\\u0000"


def decode(body: bytes) -> Batch:
    try:
        batch = _DECODER.decode(body)
    except msgspec.ValidationError as exc:
        raise _invalid(str(exc)) from None
    except (msgspec.DecodeError, UnicodeDecodeError):
        raise BatchError(400, "malformed_json", "The body is not valid JSON.") from None
    except RecursionError:  # msgspec skips unknown fields recursively: deep nesting lands here
        raise BatchError(400, "malformed_json", "The body is nested too deeply.") from None
    # A pattern constraint on the struct would run a regular expression per event (8 us for 20).
    for index, event in enumerate(batch.events):
        if event.path[0] != "/":
            field = f"events.{index}.path"
            raise BatchError(
                422, "invalid_field", f"The field {field} is invalid: it must start with /.", field
            )
    return batch


def check_text(batch: Batch, body: bytes) -> None:
    """NUL characters cannot be stored in PostgreSQL text: refuse them, naming the field."""
    if _NUL_ESCAPE in body:
        _refuse_nul(batch)


def check_numbers(batch: Batch) -> Batch:
    """Integers beyond 64 bits (JavaScript writes 1e20 as 100000000000000000000) become floats.

    Only a batch with such a prop takes the slow path; numbers no float can hold are refused,
    naming the prop. (A loop over the props costs ~2 µs for 20 events; a regular expression
    over the body looking for long digit runs cost 40 µs.)
    """
    if not _any_wide(batch):
        return batch
    events = []
    for index, event in enumerate(batch.events):
        props = event.props
        if any(_wide(v) for v in props.values()):
            fixed: dict[str, Any] = {}
            for name, value in props.items():
                try:
                    fixed[name] = float(value) if _wide(value) else value
                except OverflowError:
                    field = f"events.{index}.props.{name}"
                    raise BatchError(
                        422, "invalid_field", f"The field {field} is invalid: the number is too large.", field
                    ) from None
            event = msgspec.structs.replace(event, props=fixed)
        events.append(event)
    return msgspec.structs.replace(batch, events=events)


def check_reserved(batch: Batch) -> None:
    """Autocapture's reserved events (``engagement``, ``web_vital``, ...) carry the props their reports
    read, with the right types and ranges (``sightline.autocapture.events``); one set lookup per event."""
    for index, event in enumerate(batch.events):
        if event.name in RESERVED:
            found = problem(event.name, event.props)
            if found is not None:
                field = f"events.{index}.props.{found[0]}"
                raise BatchError(422, "invalid_field", f"The field {field} is invalid: {found[1]}.", field)


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _any_wide(batch: Batch) -> bool:
    for event in batch.events:
        for value in event.props.values():
            if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
                return True
    return False


def _wide(value: Any) -> bool:
    return type(value) is int and not INT64_MIN <= value <= INT64_MAX


def field_path(at: str) -> str:
    """``.events[3].props[...]`` -> ``events.3.props``."""
    parts = [p for p in re.split(r"[.\[\]]+", at) if p and p != "..."]
    return ".".join(parts)


def _invalid(text: str) -> BatchError:
    match = _AT.match(text)
    reason = match.group("reason") if match else text
    path = field_path(match.group("path") or "") if match else ""
    missing = _MISSING.match(reason)
    if missing:
        path = f"{path}.{missing.group('name')}" if path else missing.group("name")
        reason = "the field is required"
    if not path:
        return BatchError(
            422, "invalid_body", "The body must be a JSON object with key, batch_id and events."
        )
    reason = reason[0].lower() + reason[1:] if reason else "invalid value"
    return BatchError(422, "invalid_field", f"The field {path} is invalid: {reason}.", path)


def _refuse_nul(batch: Batch) -> None:
    for index, event in enumerate(batch.events):
        for name in Event.__struct_fields__:
            value: Any = getattr(event, name)
            if _has_nul(value):
                raise BatchError(
                    422,
                    "invalid_field",
                    f"The field events.{index}.{name} is invalid: it contains a NUL character.",
                    f"events.{index}.{name}",
                )
    if "\x00" in batch.key or "\x00" in batch.batch_id:
        raise BatchError(
            422, "invalid_field", "The field key is invalid: it contains a NUL character.", "key"
        )


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, Utm):
        return any(_has_nul(getattr(value, f)) for f in Utm.__struct_fields__)
    return False
