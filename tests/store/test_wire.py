"""The ClickHouse engine's requests over HTTP, as a server with default settings takes them: the
feed's largest requests fit its limits, a passing fault is tried again, and a request that keeps
failing is named with the server's answer."""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clickhouse_connect
import pyarrow as pa
import pytest
from clickhouse_connect.driver.exceptions import DatabaseError, OperationalError

from sightline.store import wire
from sightline.store.engines import ClickHouse
from sightline.store.feed import BACKLOG_BATCH
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event
from tests.support.server import LiveServer, create_owner


@functools.cache
def _keys() -> pa.UInt64Array:
    """A whole catch-up batch of 20-digit keys, as hashes are (built when a test asks: at import,
    every xdist worker's collection built them and loaded pandas, 0.5 s of CPU, for one worker)."""
    keys: pa.UInt64Array = pa.array(range(2**63, 2**63 + BACKLOG_BATCH), pa.uint64())
    return keys


@pytest.fixture
def store(clickhouse: Any) -> Iterator[ClickHouse]:
    engine = ClickHouse(clickhouse.url(f"t_{uuid.uuid4().hex[:12]}"))
    yield engine
    engine.close()


def _client(store: ClickHouse) -> Any:
    return store._client  # the engine's own HTTP client, to send what the engine must not


def test_the_visit_lookup_of_a_whole_catch_up_batch_passes_the_servers_limits(store: ClickHouse) -> None:
    assert store.visits_of(_keys(), 0).num_rows == 0


def test_the_same_keys_as_a_bound_parameter_are_refused_by_the_server(store: ClickHouse) -> None:
    with pytest.raises(DatabaseError) as refused:
        _client(store).query(
            "SELECT count() FROM visits WHERE session IN {keys:Array(UInt64)}",
            parameters={"keys": _keys().to_pylist()},
        )
    assert "http_max_field_value_size" in str(refused.value) or "Field value too long" in str(refused.value)


def test_a_long_bound_list_travels_in_the_body_and_reads_as_the_list(store: ClickHouse) -> None:
    ids = list(range(50_000))  # a batch's sites, a report's selection: past a form field's limit
    names = [f"name {n}" for n in range(20_000)] + ["tab\there", "new\nline", "back\\slash"]
    rows = store.query(
        "SELECT length({ids:Array(UInt64)}), has({ids:Array(UInt64)}, 49999), "
        "has({names:Array(String)}, 'tab\\there'), has({names:Array(String)}, 'new\\nline'), "
        "has({names:Array(String)}, 'back\\\\slash'), {site:UInt32}",
        {"ids": ids, "names": names, "site": 7},
    )
    assert rows == [(50_000, 1, 1, 1, 1, 7)]


def test_a_query_over_max_query_size_is_refused(store: ClickHouse) -> None:
    listed = ", ".join(str(n) for n in range(60_000))  # about 350 KiB of SQL
    with pytest.raises(DatabaseError) as refused:
        _client(store).query(f"SELECT count() FROM visits WHERE visit IN ({listed})")
    assert "max_query_size" in str(refused.value) or "Max query size exceeded" in str(refused.value)


def test_a_request_that_keeps_failing_is_named_with_the_servers_answer(store: ClickHouse) -> None:
    store.execute("DROP TABLE events")
    events = pa.table({"site_id": pa.array([1], pa.uint32())})
    with pytest.raises(wire.RequestFailedError) as failed:
        store.write(0, 1, events, pa.table({"site_id": pa.array([], pa.uint32())}), {})
    message = str(failed.value)
    assert message.startswith(
        "ClickHouse request failed (insert 1 rows into events (batch 0-1), 1 tries): Code: 60."
    )
    assert "UNKNOWN_TABLE" in message
    assert failed.value.tries == 1  # a wrong request is not sent again


def test_a_passing_fault_is_tried_again_with_back_off() -> None:
    answers: list[Exception | str] = [
        OperationalError("connection refused"),
        DatabaseError("parts", code=252),
        "ok",
    ]

    def request() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert wire.call("a read", request, back_off=(0, 0, 0)) == "ok"
    assert answers == []


def test_an_unreachable_server_is_named_after_every_try() -> None:
    def request() -> None:
        raise OperationalError(
            "HTTPConnectionPool(host='127.0.0.1', port=1): Connection refused (for url http://x)"
        )

    with pytest.raises(wire.RequestFailedError) as failed:
        wire.call("read back 3 visits", request, back_off=(0, 0))
    assert str(failed.value) == (
        "ClickHouse request failed (read back 3 visits, 3 tries): "
        "HTTPConnectionPool(host='127.0.0.1', port=1): Connection refused"
    )


def test_the_http_client_is_what_the_tests_use(clickhouse: Any) -> None:
    url = clickhouse.url("default").replace("clickhouse://", "http://", 1)
    client = clickhouse_connect.get_client(dsn=url)
    assert type(client).__name__ == "HttpClient"
    client.close()


def test_the_store_health_names_the_request_that_failed_and_the_servers_answer(
    tmp_path: Path, clickhouse: Any
) -> None:
    events_url = clickhouse.url(f"health_{uuid.uuid4().hex[:8]}")
    server = LiveServer(tmp_path / "data", env={"SIGHTLINE_EVENTS_URL": events_url}).start()
    try:
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        site = Site.create(owner, "localhost:38302")
        broken = ClickHouse(events_url)
        broken.execute("DROP TABLE visits")
        broken.close()
        with Visitor(server.base_url, site) as visitor:
            assert visitor.send(batch(site, event())).status_code == 202
        deadline = time.monotonic() + 60
        store: dict[str, Any] = {}
        while time.monotonic() < deadline:
            store = owner.get("/api/health").json()["services"]["store"]
            if store["problem"]:
                break
            time.sleep(0.3)
        assert store["problem"].startswith(
            "ClickHouse request failed (read back 1 visits, 1 tries): Code: 60."
        )
        assert "Unknown table" in store["problem"] or "doesn't exist" in store["problem"]
        owner.close()
    finally:
        server.stop()
