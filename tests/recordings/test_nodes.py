"""Two real ``sightline serve`` processes on one PostgreSQL with one recordings storage (a shared
directory, or an S3-compatible bucket): recording chunks spread over both nodes, one node killed
with SIGKILL halfway, and every acknowledged chunk replays from the other node, once."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from sightline.recordings.store import open_store
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.recordings.helpers import (
    RecordingSite,
    chunk,
    moves,
    new_recording_id,
    page_events,
    post_chunk,
    recording_site,
)
from tests.support.objectstore import ObjectStore
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

RECORDINGS = 6
CHUNKS = 12
START = 1_700_000_000_000


class Nodes:
    """Node A and node B behind a pretend load balancer: a chunk goes to the node it is sent to
    unless that node is dead, when the recorder's retry lands on the other one."""

    def __init__(self, first: LiveServer, second: LiveServer, site: RecordingSite) -> None:
        self.first = first
        self.second = second
        self.site = site
        self.killed = threading.Event()
        self.lock = threading.Lock()
        self.acknowledged: dict[str, set[int]] = {}
        self.by_node: Counter[str] = Counter()
        self.races = 0  # a chunk sent to both nodes at once, both answered 202
        self.unavailable: list[str] = []  # 503s: with both nodes serialising, there are none

    def node(self, preferred: LiveServer) -> LiveServer:
        return self.second if preferred is self.first and self.killed.is_set() else preferred

    def post(self, node: LiveServer, recording: str, seq: int, body: bytes) -> dict[str, Any] | None:
        """One attempt: the 202's body, or None for a dead node or a 503 (the recorder retries)."""
        try:
            answer = post_chunk(node, self.site, recording, seq, body)
        except httpx.TransportError:
            return None  # the node died with the request in flight: not acknowledged
        if answer.status_code == 503:
            with self.lock:
                self.unavailable.append(answer.text)
            return None
        assert answer.status_code == 202, answer.text
        with self.lock:
            self.acknowledged.setdefault(recording, set()).add(seq)
            self.by_node["A" if node is self.first else "B"] += 1
        result: dict[str, Any] = answer.json()
        return result

    def deliver(self, preferred: LiveServer, recording: str, seq: int, body: bytes) -> dict[str, Any]:
        """Send until acknowledged, as the recorder does (backoff shortened)."""
        for _ in range(100):
            result = self.post(self.node(preferred), recording, seq, body)
            if result is not None:
                return result
            time.sleep(0.1)
        raise AssertionError(f"chunk {recording}/{seq} was never acknowledged")

    def race(self, recording: str, seq: int, body: bytes) -> None:
        """The same chunk to both nodes at the same moment (a retry racing its first attempt)."""
        results: list[dict[str, Any] | None] = [None, None]
        start = threading.Barrier(2)

        def send(index: int, node: LiveServer) -> None:
            start.wait()
            results[index] = self.post(node, recording, seq, body)

        threads = [
            threading.Thread(target=send, args=(i, n)) for i, n in enumerate((self.first, self.second))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        answered = [r for r in results if r is not None]
        if len(answered) == 2:
            assert sorted(r["stored"] for r in answered) == [False, True], answered  # stored once
            with self.lock:
                self.races += 1
        else:  # a node died meanwhile (or was busy): send it on until acknowledged
            answered.append(self.deliver(self.second, recording, seq, body))
            assert sum(r["stored"] for r in answered) <= 1, answered


def plan_of(index: int) -> list[list[dict[str, Any]]]:
    """The events of each chunk of recording ``index``: a page with its snapshot, then movements."""
    start = START + index * 10_000_000
    return [page_events(start)] + [moves(start + seq * 5000, 2) for seq in range(1, CHUNKS)]


@pytest.mark.postgres
@pytest.mark.parametrize("storage", ["directory", "s3"])
def test_chunks_spread_over_two_nodes_all_replay_once_after_one_node_is_killed_halfway(
    postgres: PostgresServer, s3_env: ObjectStore, tmp_path: Path, storage: str
) -> None:
    if storage == "directory":
        recordings_url = f"file://{tmp_path / 'shared-recordings'}"  # as a network file system would be
    else:
        recordings_url = s3_env.url(s3_env.create_bucket(), "nodes")
    env = {**s3_env.env(), "SIGHTLINE_RECORDINGS_URL": recordings_url}
    database = postgres.create_database()
    first = LiveServer(tmp_path / "node-a", database, env=env).start()
    second: LiveServer | None = None
    try:
        create_owner(first, OWNER_EMAIL, OWNER_PASSWORD)
        second = LiveServer(tmp_path / "node-b", database, env=env).start()
        on_first = sign_in(first)
        site = recording_site(on_first)
        nodes = Nodes(first, second, site)
        plans = {new_recording_id(): plan_of(i) for i in range(RECORDINGS)}
        half = threading.Event()
        failures: list[BaseException] = []

        def recorder(index: int, recording: str, plan: list[list[dict[str, Any]]]) -> None:
            try:
                send_all(index, recording, plan)
            except BaseException as error:  # reported by the test, not lost in the thread
                failures.append(error)
                half.set()

        def send_all(index: int, recording: str, plan: list[list[dict[str, Any]]]) -> None:
            for seq, events in enumerate(plan):
                body = chunk(events, session=f"visit-{index}", visitor=f"visitor-{index}")
                if seq % 4 == 3 and not nodes.killed.is_set():
                    nodes.race(recording, seq, body)
                else:
                    preferred = first if (seq + index) % 2 == 0 else second
                    nodes.deliver(preferred, recording, seq, body)
                if sum(map(len, nodes.acknowledged.values())) >= RECORDINGS * CHUNKS // 2:
                    half.set()
                time.sleep(0.05)

        threads = [
            threading.Thread(target=recorder, args=(i, recording, plan))
            for i, (recording, plan) in enumerate(plans.items())
        ]
        for thread in threads:
            thread.start()
        assert half.wait(timeout=120), "half of the chunks were never acknowledged"
        nodes.killed.set()
        first.kill()  # SIGKILL, with chunks in flight to it
        for thread in threads:
            thread.join(timeout=300)
        assert not any(thread.is_alive() for thread in threads)
        assert failures == []

        assert nodes.by_node["A"] > 0
        assert nodes.by_node["B"] > 0
        assert nodes.races > 0, "no chunk was sent to both nodes at once"
        assert nodes.unavailable == []  # no node tripped over the other's chunk (a lost race is a 503)
        assert nodes.acknowledged == {recording: set(range(CHUNKS)) for recording in plans}

        # Every chunk replays from node B, in order, once; the storage holds each chunk once.
        on_second = sign_in(second)
        listed = on_second.get(f"/api/sites/{site.id}/recordings").json()["recordings"]
        assert {r["id"] for r in listed} == set(plans)
        store = open_store(recordings_url, tmp_path / "unused")
        for recording, plan in plans.items():
            details = on_second.get(f"/api/recordings/{recording}").json()
            assert details["chunks"] == CHUNKS, details
            stamps = [int(e["timestamp"]) for events in plan for e in events]
            assert details["duration_ms"] == max(stamps) - min(stamps)  # no update of the index lost
            assert details["pages"] == 1
            replay = on_second.get(f"/api/recordings/{recording}/events")
            assert replay.status_code == 200, replay.text
            assert orjson.loads(replay.content)["events"] == [e for events in plan for e in events]
            assert store.seqs(recording) == list(range(CHUNKS))
        assert sorted(store.recording_ids()) == sorted(plans)
        on_first.close()
        on_second.close()
    finally:
        first.stop()
        if second is not None:
            second.stop()
