"""The writer process: killed, stopped with the server, orphaned by a killed server; and its wire."""

from __future__ import annotations

import itertools
import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgspec
import orjson
import pytest
from sqlalchemy import select

from sightline.accounts.users import create_user
from sightline.database import Database, open_database
from sightline.database.schema import events
from sightline.ingest.protocol import HEAD, MAX_FRAME, Frames, ProtocolError, Submit, frame
from sightline.sites.service import create_site
from tests.conftest import BACKENDS, OWNER_EMAIL, OWNER_PASSWORD, StartServer, database_url_for, sign_in
from tests.ingest.helpers import CHROME, batch_id, event, wait_until, writes_blocked
from tests.support.http import TLS
from tests.support.server import LiveServer

EVENTS_PER_BATCH = 5
PASSWORD = "s3cret-" + batch_id()  # in the PostgreSQL URL of the module's servers
_ports = itertools.count(9001)  # each test's site is on a domain of its own: localhost:<port>


def headers_for(domain: str) -> dict[str, str]:
    """What the site's own pages send: their origin, a browser's user agent, the SDK's body type."""
    return {"Origin": f"http://{domain}", "User-Agent": CHROME, "Content-Type": "text/plain"}


@dataclass
class Answer:
    bid: str
    body: bytes
    status: int | None  # None: the connection failed (the server is gone)
    code: str | None = None  # the error code of an answer other than 202
    retry_after: str | None = None


@dataclass
class Shop:
    """The log database, a site of its own on it, and a server on that database."""

    db: Database
    key: str
    site_id: int
    headers: dict[str, str]


class Load:
    """Six clients posting 5-event batches as fast as they are answered, recording every answer."""

    def __init__(self, server: LiveServer, shop: Shop) -> None:
        self.server, self.key, self.headers, self.answers = server, shop.key, shop.headers, list[Answer]()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._client, args=(n,)) for n in range(6)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def _client(self, number: int) -> None:
        with httpx.Client(
            verify=TLS, base_url=self.server.base_url, headers=self.headers, timeout=30
        ) as http:
            while not self._stop.is_set():
                bid = batch_id()
                evts = [event(f"c{number}", props={"i": i}) for i in range(EVENTS_PER_BATCH)]
                body = orjson.dumps({"key": self.key, "batch_id": bid, "events": evts})
                try:
                    response = http.post("/i/events", content=body)
                except httpx.HTTPError:
                    self.answers.append(Answer(bid, body, None))
                    time.sleep(0.05)
                    continue
                code = None if response.status_code == 202 else response.json()["error"]["code"]
                retry_after = response.headers.get("retry-after")
                self.answers.append(Answer(bid, body, response.status_code, code, retry_after))
                if code is not None:
                    time.sleep(0.02)  # an SDK backs off before sending again

    def wait_for(self, status: int | None, more: int, timeout: float = 20) -> None:
        def count() -> int:
            return sum(a.status == status for a in list(self.answers))

        target = count() + more
        wait_until(lambda: count() >= target, timeout)

    def acknowledged(self) -> list[str]:
        return [a.bid for a in self.answers if a.status == 202]


def new_shop(db: Database, owner_id: int) -> Shop:
    domain = f"localhost:{next(_ports)}"
    with db.begin() as conn:
        site = create_site(conn, owner_id, "Shop", domain)
    return Shop(db, site["key"], site["id"], headers_for(domain))


@pytest.fixture
def shop(database_url: str) -> Iterator[Shop]:
    """A database of its own (migrated) with the owner account and one site, for a server of its own."""
    db = open_database(database_url)
    with db.begin() as conn:
        owner = create_user(conn, OWNER_EMAIL, OWNER_PASSWORD)
    yield new_shop(db, owner["id"])
    db.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def kept_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, Database, int]]:
    """One server per engine for the tests that kill its writer but not the server: (server, its
    database, the owner's id). Its PostgreSQL URL holds a password (the test PostgreSQL trusts
    local connections, so any password is accepted), which must stay off the writer's command line."""
    directory = tmp_path_factory.mktemp("writer")
    url = database_url_for(request, request.param, directory)
    db = open_database(url)
    with db.begin() as conn:
        owner = create_user(conn, OWNER_EMAIL, OWNER_PASSWORD)
    server = LiveServer(directory / "data", url.replace("postgres@", f"postgres:{PASSWORD}@", 1)).start()
    yield server, db, owner["id"]
    server.stop()
    db.dispose()


@pytest.fixture
def kept_shop(kept_server: tuple[LiveServer, Database, int]) -> tuple[LiveServer, Shop]:
    """The module's server of this engine, its writer up, and a site of its own on it."""
    server, db, owner_id = kept_server
    with closing(sign_in(server)) as owner:  # a test before may have killed the writer just now
        wait_until(lambda: ingest_health(owner)["writer_pid"] is not None, 15)
    return server, new_shop(db, owner_id)


def ingest_health(owner: httpx.Client) -> dict[str, Any]:
    found: dict[str, Any] = owner.get("/api/health").json()["services"]["ingest"]
    return found


def per_batch(db: Database, site_id: int) -> Counter[str]:
    with db.read() as conn:
        rows = conn.execute(select(events.c.batch_id).where(events.c.site_id == site_id)).all()
    return Counter(row.batch_id for row in rows)


def assert_stored_once(db: Database, site_id: int, bids: list[str]) -> None:
    """Each of ``bids`` is stored whole and once, and no batch at all is stored twice or in part."""
    counts = per_batch(db, site_id)
    assert [bid for bid in bids if counts[bid] != EVENTS_PER_BATCH] == []
    assert set(counts.values()) <= {EVENTS_PER_BATCH}


def serve_with_writer(start_server: StartServer, url: str) -> tuple[LiveServer, int]:
    server = start_server(url)
    with closing(sign_in(server)) as owner:
        writer_pid = ingest_health(owner)["writer_pid"]
    assert isinstance(writer_pid, int)
    return server, writer_pid


def gone(pid: int) -> bool:
    """The process has exited (no such process, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@contextmanager
def reaped(pid: int) -> Iterator[None]:
    """Kill the writer ``pid`` if it outlives the block (it would hold the server's output open)."""
    try:
        yield
    finally:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_killed_writer_is_replaced_and_every_acknowledged_batch_is_stored_once(
    kept_shop: tuple[LiveServer, Shop],
) -> None:
    server, shop = kept_shop
    db, site_id = shop.db, shop.site_id
    with closing(sign_in(server)) as owner:
        before = ingest_health(owner)
        first_pid = before["writer_pid"]
        with Load(server, shop) as load:
            load.wait_for(202, 100)
            os.kill(first_pid, signal.SIGKILL)
            wait_until(lambda: ingest_health(owner)["writer_pid"] not in (None, first_pid), 15)
            load.wait_for(202, 100)  # batches sent to the new writer are stored
        after = ingest_health(owner)
    assert after["writer_starts"] == before["writer_starts"] + 1
    assert after["status"] in ("ok", "degraded")
    assert gone(first_pid)

    assert {a.status for a in load.answers} == {202, 503}
    refused = [a for a in load.answers if a.status == 503]
    assert {(a.code, a.retry_after) for a in refused} == {("storage_unavailable", "2")}
    dropped = after["dropped"]["storage_unavailable"] - before["dropped"]["storage_unavailable"]
    assert dropped == len(refused)
    assert_stored_once(db, site_id, load.acknowledged())

    # Sent again, each refused batch is stored once (even one committed just before the kill).
    with httpx.Client(verify=TLS, base_url=server.base_url, headers=shop.headers, timeout=30) as http:
        resent = [http.post("/i/events", content=a.body).status_code for a in refused]
    assert set(resent) == {202}
    assert_stored_once(db, site_id, [a.bid for a in load.answers if a.status in (202, 503)])


def test_batches_held_by_a_killed_writer_are_answered_503_and_stored_once_when_sent_again(
    kept_shop: tuple[LiveServer, Shop],
) -> None:
    server, shop = kept_shop
    db, site_id = shop.db, shop.site_id
    bodies = [
        orjson.dumps(
            {"key": shop.key, "batch_id": batch_id(), "events": [event(f"held{n}")] * EVENTS_PER_BATCH}
        )
        for n in range(4)
    ]
    with (
        closing(sign_in(server)) as owner,
        httpx.Client(verify=TLS, base_url=server.base_url, headers=shop.headers, timeout=30) as http,
        ThreadPoolExecutor(len(bodies)) as pool,
    ):
        before = ingest_health(owner)
        with writes_blocked(server, "event_batches"):  # the writer waits in its transaction
            futures = [pool.submit(http.post, "/i/events", content=body) for body in bodies]
            wait_until(lambda: ingest_health(owner)["queue_depth"] == len(bodies) * EVENTS_PER_BATCH)
            os.kill(before["writer_pid"], signal.SIGKILL)
            # Answered at once (the lock is still held), not when a database timeout ends the wait.
            answers = [f.result(timeout=5) for f in futures]
        seen = {(a.status_code, a.json()["error"]["code"], a.headers["retry-after"]) for a in answers}
        assert seen == {(503, "storage_unavailable", "2")}
        wait_until(lambda: ingest_health(owner)["status"] != "down", 15)
        after = ingest_health(owner)
        assert after["writer_starts"] == before["writer_starts"] + 1
        assert after["failed_commits"] == before["failed_commits"] + 1
        assert after["queue_depth"] == 0
        assert per_batch(db, site_id) == Counter()
        for _ in range(2):  # stored, then answered 202 again as a duplicate
            assert [http.post("/i/events", content=body).status_code for body in bodies] == [202] * 4
    assert per_batch(db, site_id) == Counter({orjson.loads(b)["batch_id"]: EVENTS_PER_BATCH for b in bodies})


def test_a_graceful_stop_stores_every_acknowledged_batch_and_ends_the_writer(
    database_url: str, start_server: StartServer, shop: Shop
) -> None:
    db, site_id = shop.db, shop.site_id
    server, writer_pid = serve_with_writer(start_server, database_url)
    assert server.process is not None
    with Load(server, shop) as load, reaped(writer_pid):
        load.wait_for(202, 150)
        server.process.terminate()  # SIGTERM to the server alone, with batches in flight
        server.process.wait(timeout=15)
        assert gone(writer_pid)
        load.wait_for(None, 6)  # every client has seen the server go
    # Uvicorn ends by raising the signal it handled again: -SIGTERM, not a SIGKILL.
    assert server.process.returncode == -signal.SIGTERM
    assert len(load.acknowledged()) >= 150
    assert_stored_once(db, site_id, load.acknowledged())


def test_the_writer_exits_by_itself_when_the_server_is_killed_and_keeps_what_it_acknowledged(
    database_url: str, start_server: StartServer, shop: Shop
) -> None:
    db, site_id = shop.db, shop.site_id
    server, writer_pid = serve_with_writer(start_server, database_url)
    assert server.process is not None
    with Load(server, shop) as load, reaped(writer_pid):
        load.wait_for(202, 150)
        server.process.kill()
        server.process.wait(timeout=10)
        wait_until(lambda: gone(writer_pid), 5)
    assert_stored_once(db, site_id, load.acknowledged())


def test_the_database_url_and_its_password_stay_off_the_writer_command_line(
    kept_shop: tuple[LiveServer, Shop],
) -> None:
    server, _ = kept_shop
    url = server.database_url
    assert url is not None
    with closing(sign_in(server)) as owner:
        writer_pid = ingest_health(owner)["writer_pid"]
    assert url.startswith("sqlite") or f":{PASSWORD}@" in url
    command = Path(f"/proc/{writer_pid}/cmdline").read_bytes().decode()
    assert "sightline.ingest.writer_process" in command
    assert url not in command
    assert url.split("://", 1)[1] not in command
    assert PASSWORD not in command


def _wire(count: int) -> tuple[list[bytes], bytes]:
    """``count`` Submit frames of growing size: their payloads, and the bytes on the wire."""
    encoder = msgspec.msgpack.Encoder()
    submits = [
        Submit(n, 1, "example.com", "Chrome", None, "desktop", n, os.urandom(n * 37)) for n in range(count)
    ]
    return [encoder.encode(m) for m in submits], b"".join(frame(encoder, m) for m in submits)


def test_frames_split_across_arbitrary_reads_are_reassembled_in_order() -> None:
    expected, wire = _wire(60)
    chances = random.Random(7)
    for largest in (1, 3, 4, 5, 64, 1000, len(wire)):
        frames, received, position = Frames(), list[bytes](), 0
        while position < len(wire):
            size = chances.randint(1, largest)
            received += frames.feed(wire[position : position + size])
            position += size
            # Whatever does not complete a frame yet is held back, never lost nor handed out.
            assert frames.pending == min(position, len(wire)) - sum(HEAD.size + len(p) for p in received)
        assert received == expected


def test_frames_refuse_a_length_above_the_largest_frame() -> None:
    frames = Frames()
    assert frames.feed(HEAD.pack(MAX_FRAME)) == []  # the largest allowed: waits for it
    with pytest.raises(ProtocolError):
        Frames().feed(_wire(3)[1] + HEAD.pack(MAX_FRAME + 1) + b"\x00" * 16)  # after good frames


def killed_and_replaced(owner: httpx.Client, pid: int) -> int:
    """SIGKILL the writer ``pid``; the pid of the writer that replaces it."""
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: ingest_health(owner)["writer_pid"] not in (None, pid), 15)
    new: int = ingest_health(owner)["writer_pid"]
    return new


def test_replacing_the_writer_again_and_again_leaves_the_server_no_more_open_pipes(
    kept_shop: tuple[LiveServer, Shop],
) -> None:
    server, _ = kept_shop
    assert server.process is not None
    server_fds = Path(f"/proc/{server.process.pid}/fd")

    def pipes() -> int:
        count = 0
        for fd in server_fds.iterdir():
            try:  # a descriptor may close between the listing and the look
                count += os.readlink(fd).startswith("pipe:")
            except FileNotFoundError:
                continue
        return count

    with closing(sign_in(server)) as owner:
        # the store process's start pipe closes once it says it is ready: count after that
        wait_until(lambda: owner.get("/api/health").json()["services"]["store"]["status"] == "ok", 60)
        before = pipes()
        health = ingest_health(owner)
        pid = health["writer_pid"]
        for _ in range(3):
            pid = killed_and_replaced(owner, pid)
        assert ingest_health(owner)["writer_starts"] == health["writer_starts"] + 3
    # a start's short-lived pipes (the spawn's error channel) close by themselves;
    # a leak stays, and the wait runs out
    wait_until(lambda: pipes() == before, 5)
