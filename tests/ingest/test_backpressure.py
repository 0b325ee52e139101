"""A full queue answers 429 and keeps what it promised; a failed commit answers 503 and stores nothing."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from sightline.database import Database
from tests.ingest.helpers import Visitor, batch, dropped, event, stored, writes_blocked
from tests.support import waits
from tests.support.server import LiveServer


@contextmanager
def table_renamed(db: Database, table: str) -> Iterator[None]:
    with db.begin() as conn:
        conn.exec_driver_sql(f"ALTER TABLE {table} RENAME TO {table}_away")
    try:
        yield
    finally:
        with db.begin() as conn:
            conn.exec_driver_sql(f"ALTER TABLE {table}_away RENAME TO {table}")


def test_a_full_queue_answers_429_with_retry_after_and_keeps_every_acknowledged_event(
    ingest_server: LiveServer, visitor: Visitor, ingest_db: Database
) -> None:
    # The module's server queues at most 200 events: ten 20-event batches while the writer waits.
    bodies = [batch(visitor.site, *[event(f"b{n}-{i}") for i in range(20)]) for n in range(15)]
    with concurrent.futures.ThreadPoolExecutor(15) as pool:
        with writes_blocked(ingest_server, "event_batches"):
            futures = [pool.submit(visitor.send, body) for body in bodies]
            deadline = time.monotonic() + waits.EVENTUALLY
            while sum(f.done() for f in futures) < 5 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)  # nothing else is answered while the writer waits
            refused = [f.result() for f in futures if f.done()]
        answers = [f.result() for f in futures]
    assert len(refused) == 5
    for answer in refused:
        assert answer.status_code == 429, answer.text
        assert answer.json()["error"]["code"] == "overloaded"
        assert answer.headers["retry-after"] == "2"
        assert answer.headers["access-control-allow-origin"] == visitor.site.origin
        assert "Retry-After" in answer.headers["access-control-expose-headers"]
    assert sorted(a.status_code for a in answers) == [202] * 10 + [429] * 5
    accepted = {b["batch_id"] for b, a in zip(bodies, answers, strict=True) if a.status_code == 202}
    rows = stored(ingest_db, visitor.site)
    assert len(rows) == 200
    assert {r.batch_id for r in rows} == accepted


def test_a_failed_commit_answers_503_stores_nothing_and_degrades_health(
    visitor: Visitor, ingest_db: Database, ingest_owner: httpx.Client
) -> None:
    before = dropped(ingest_owner)["storage_unavailable"]
    body = batch(visitor.site, event("lost"), event("lost"))
    with table_renamed(ingest_db, "events"):
        response = visitor.send(body)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "storage_unavailable"
    assert response.headers["retry-after"] == "2"
    ingest = ingest_owner.get("/api/health").json()["services"]["ingest"]
    assert ingest["status"] == "degraded"
    assert ingest["dropped"]["storage_unavailable"] == before + 1
    assert stored(ingest_db, visitor.site) == []
    # The batch id was not kept either: the SDK's retry is stored.
    assert visitor.send(body).status_code == 202
    assert [r.name for r in stored(ingest_db, visitor.site)] == ["lost", "lost"]
