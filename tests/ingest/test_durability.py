"""An acknowledged event survives SIGKILL: count the 202s of a loaded server, kill it, restart, compare."""

from __future__ import annotations

import threading
import time
from collections import Counter

import httpx
import orjson
from sqlalchemy import select

from sightline.accounts.users import create_user
from sightline.database import open_database
from sightline.database.schema import events
from sightline.sites.service import create_site
from tests.conftest import StartServer
from tests.ingest.helpers import CHROME, batch_id, event
from tests.support.http import TLS

CLIENTS = 6
EVENTS_PER_BATCH = 5


def test_no_acknowledged_event_is_lost_when_the_server_is_killed_under_load(
    database_url: str, start_server: StartServer
) -> None:
    db = open_database(database_url)
    with db.begin() as conn:
        owner = create_user(conn, "owner@example.com", "correct horse battery staple")
        site = create_site(conn, owner["id"], "Shop", "localhost:9999")
    server = start_server(database_url)
    acknowledged: list[str] = []
    sent: list[str] = []
    stop = threading.Event()
    lock = threading.Lock()

    def client(number: int) -> None:
        headers = {"Origin": "http://localhost:9999", "User-Agent": CHROME, "Content-Type": "text/plain"}
        with httpx.Client(verify=TLS, base_url=server.base_url, headers=headers, timeout=10) as http:
            while not stop.is_set():
                bid = batch_id()
                body = {
                    "key": site["key"],
                    "batch_id": bid,
                    "events": [event(f"c{number}", props={"i": i}) for i in range(EVENTS_PER_BATCH)],
                }
                with lock:
                    sent.append(bid)
                try:
                    response = http.post("/i/events", content=orjson.dumps(body))
                except httpx.HTTPError:
                    return  # the server is gone
                if response.status_code == 202:
                    with lock:
                        acknowledged.append(bid)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 20
    while len(acknowledged) < 300 and time.monotonic() < deadline:
        time.sleep(0.02)
    server.kill()  # SIGKILL in the middle of the load
    stop.set()
    for thread in threads:
        thread.join(timeout=20)
    assert len(acknowledged) >= 300, "the load did not get going"

    restarted = start_server(database_url)
    with db.read() as conn:
        rows = conn.execute(select(events.c.batch_id).where(events.c.site_id == site["id"])).all()
    per_batch = Counter(row.batch_id for row in rows)
    missing = [bid for bid in acknowledged if per_batch.get(bid) != EVENTS_PER_BATCH]
    assert missing == [], f"{len(missing)} acknowledged batches lost of {len(acknowledged)}"
    # Batches cut off by the kill are stored whole or not at all, and nothing unknown appears.
    assert set(per_batch.values()) == {EVENTS_PER_BATCH}
    assert set(per_batch) <= set(sent)
    assert len(per_batch) >= len(acknowledged)

    # After the restart a retried batch that was stored before the kill is still stored once.
    with httpx.Client(
        verify=TLS,
        base_url=restarted.base_url,
        headers={"Origin": "http://localhost:9999", "User-Agent": CHROME},
    ) as http:
        retry = {
            "key": site["key"],
            "batch_id": acknowledged[-1],
            "events": [event("c0", props={"i": i}) for i in range(EVENTS_PER_BATCH)],
        }
        assert http.post("/i/events", content=orjson.dumps(retry)).status_code == 202
    with db.read() as conn:
        again = conn.execute(select(events.c.id).where(events.c.batch_id == acknowledged[-1])).all()
    assert len(again) == EVENTS_PER_BATCH
    db.dispose()
