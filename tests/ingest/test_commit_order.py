"""Several nodes on one PostgreSQL commit events to the log in id order (the store feeds by id)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, text

from sightline.accounts.users import create_user
from sightline.database import open_database
from sightline.database.lease import lock_key
from sightline.database.tables.events import COMMIT_ORDER, EVENT_COLUMNS, events
from sightline.ingest.log_writer import LogWriter, Rows
from sightline.sites.service import create_site
from sightline.sites.traffic import TrafficMarker
from tests.support.postgres import PostgresServer


def _event(site_id: int, batch: str, now: datetime) -> dict[str, Any]:
    return {
        "site_id": site_id,
        "time": now,
        "visitor_id": "v1",
        "session_id": "s1",
        "name": "pageview",
        "path": "/",
        "batch_id": batch,
    }


def test_a_writer_waits_for_another_node_s_open_commit_so_ids_reach_the_log_in_order(
    postgres: PostgresServer,
) -> None:
    db = open_database(postgres.create_database())
    try:
        with db.begin() as conn:
            owner = create_user(conn, "order@example.com", "correct horse battery staple")
            site_id = int(create_site(conn, owner["id"], "Order", "order.example")["id"])
        now = datetime.now(UTC)
        store = LogWriter(db, TrafficMarker())
        values = [_event(site_id, "this-node", now).get(column) for column in EVENT_COLUMNS]
        done = threading.Event()

        def commit() -> None:
            store.commit([Rows(site_id, "this-node", 1, values)])
            done.set()

        # Another node's writer: it took its ids and has not committed yet.
        with db.engine.connect() as other:
            other.begin()
            other.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key(COMMIT_ORDER)})
            earlier = insert(events).values(_event(site_id, "other-node", now)).returning(events.c.id)
            earlier_id = int(other.execute(earlier).scalar_one())
            thread = threading.Thread(target=commit, daemon=True)
            thread.start()
            try:
                assert not done.wait(1.0), "this node committed while an earlier id was still uncommitted"
            finally:
                other.commit()
        assert done.wait(10.0)
        thread.join()
        store.release()
        with db.read() as conn:
            rows = conn.execute(select(events.c.batch_id, events.c.id).order_by(events.c.id)).all()
            assert conn.execute(select(func.count()).select_from(events)).scalar_one() == 2
        assert [r.batch_id for r in rows] == ["other-node", "this-node"]
        assert rows[0].id == earlier_id
    finally:
        db.dispose()
