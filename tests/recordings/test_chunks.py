"""Decoding a chunk: what the index needs, the field at fault, and bounds that hold whatever it holds."""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator

import orjson
import pytest

from sightline.errors import ApiError
from sightline.recordings import chunks
from sightline.recordings.worker import Refusal, decode_in_worker

T = 1_700_000_000_000


def body(events: object, **fields: object) -> bytes:
    return gzip.compress(orjson.dumps({"session_id": "s", "visitor_id": "v", "events": events, **fields}))


def doc(events: object) -> dict[str, object]:
    return {"session_id": "s", "visitor_id": "v", "events": events}


def refusal(data: bytes) -> ApiError:
    with pytest.raises(ApiError) as refused:
        chunks.decode(data)
    return refused.value


def test_a_chunk_gives_its_timestamps_snapshot_and_page_changes() -> None:
    events = [
        {"type": 4, "timestamp": T, "data": {"href": "https://shop.example/"}},
        {"type": 2, "timestamp": T + 5, "data": {"node": {"type": 0, "childNodes": []}}},
        {"type": 5, "timestamp": T + 9, "data": {"tag": "page", "payload": {"href": "/b"}}},
        {"type": 5, "timestamp": T + 7, "data": {"tag": "other"}},
        {"type": 3, "timestamp": T + 8.5, "data": [1, 2]},
    ]
    data = body(events, extra={"ignored": [1, {}]})
    chunk = chunks.decode(data)
    assert (chunk.session_id, chunk.visitor_id, chunk.events) == ("s", "v", 5)
    assert (chunk.first_ts, chunk.last_ts, chunk.snapshot, chunk.pages) == (T, T + 9, True, 2)
    assert chunk.stored is data
    assert orjson.loads(b"[" + chunks.events_json(chunk.stored) + b"]") == events


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ([], "body"),
        ({"visitor_id": "v", "events": [{"type": 3, "timestamp": T}]}, "session_id"),
        ({"session_id": "", "visitor_id": "v", "events": [{"type": 3, "timestamp": T}]}, "session_id"),
        ({"session_id": "s", "visitor_id": 7, "events": [{"type": 3, "timestamp": T}]}, "visitor_id"),
        ({"session_id": "s", "visitor_id": "v", "events": {}}, "events"),
        (doc([]), "events"),
        (doc([{"type": 3, "timestamp": T}, 5]), "events.1"),
        (doc([{"type": 101, "timestamp": T}]), "events.0.type"),
        (doc([{"type": True, "timestamp": T}]), "events.0.type"),
        (doc([{"type": 3}]), "events.0.timestamp"),
        (
            {"session_id": "s", "visitor_id": "v", "events": [{"type": 3, "timestamp": -1}]},
            "events.0.timestamp",
        ),
        (
            {"session_id": "s", "visitor_id": "v", "events": [{"type": 3, "timestamp": 2e15}]},
            "events.0.timestamp",
        ),
    ],
)
def test_a_malformed_chunk_names_the_field_at_fault(document: object, field: str) -> None:
    refused = refusal(gzip.compress(orjson.dumps(document)))
    assert (refused.status, refused.code, refused.field) == (422, "invalid_field", field)
    assert refused.message


def test_too_many_events_are_refused() -> None:
    refused = refusal(body([{"type": 3, "timestamp": T}] * (chunks.MAX_EVENTS + 1)))
    assert (refused.status, refused.field) == (422, "events")


def test_text_that_is_not_utf8_anywhere_in_the_chunk_is_refused() -> None:
    text = (
        b'{"session_id":"s","visitor_id":"v","events":[{"type":3,"timestamp":1,"data":"caf\xc3\xa9 \xff"}]}'
    )
    refused = refusal(gzip.compress(text))
    assert (refused.status, refused.code) == (400, "malformed_json")
    assert chunks.decode(gzip.compress(text.replace(b" \xff", b""))).events == 1


def test_inflating_stops_at_the_limit_however_the_gzip_ends() -> None:
    exact = gzip.compress(b" " * (chunks.MAX_RAW - 2) + b"{}")
    with pytest.raises(ApiError) as at_limit:
        chunks.decode(exact)
    assert at_limit.value.code == "invalid_field"  # inflated whole: exactly the limit is allowed
    over = refusal(gzip.compress(b" " * chunks.MAX_RAW + b"{}"))
    assert (over.status, over.code) == (413, "chunk_too_large")
    cut = refusal(gzip.compress(b"{}")[:-9])
    assert cut.code == "malformed_gzip"


@pytest.fixture
def worker_recursion_limit() -> Iterator[None]:
    """The decoder process's recursion limit, in this process for the test."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(chunks.MAX_DEPTH + 40)
    yield
    sys.setrecursionlimit(before)


def test_nesting_is_bounded_and_refused_as_too_deep(worker_recursion_limit: None) -> None:
    def nested(depth: int) -> bytes:
        data = b"[" * depth + b"]" * depth
        text = b'{"session_id":"s","visitor_id":"v","events":[{"type":2,"timestamp":1,"data":' + data + b"}]}"
        return gzip.compress(text)

    assert chunks.decode(nested(400)).snapshot
    refused = refusal(nested(chunks.MAX_DEPTH + 50))
    assert (refused.status, refused.code) == (422, "chunk_too_deep")


def test_the_worker_answers_refusals_as_data_and_sends_no_gzip_body_back() -> None:
    assert decode_in_worker(b"\x1f\x8bnope") == Refusal(
        400, "malformed_gzip", "The body is not valid gzip data.", None
    )
    decoded = decode_in_worker(body([{"type": 3, "timestamp": T}]))
    assert not isinstance(decoded, Refusal)
    assert decoded.stored == b""
    plain = orjson.dumps(doc([{"type": 3, "timestamp": T}]))
    compressed = decode_in_worker(plain)
    assert not isinstance(compressed, Refusal)
    assert gzip.decompress(compressed.stored) == plain
