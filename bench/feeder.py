"""A steady stream of SDK batches to a running server, in a process of its own, so that a
benchmark can time the dashboard as an owner meets it: while events arrive and the store feeds
them (every feed step drops the kept figures of the site and hours it touched, docs/reports.md).

``Feeder(base_url, key, origin, rate)`` sends ``rate`` events a second as batches of 20 pageviews
and custom events of new and returning visitors, from ``THREADS`` keep-alive connections, paced
one batch per thread at a time; ``stop()`` returns what was sent and acknowledged.
"""

from __future__ import annotations

import multiprocessing
import random
import secrets
import threading
import time
from dataclasses import dataclass
from multiprocessing.sharedctypes import Synchronized
from typing import Any

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
PER_BATCH = 20
THREADS = 4
PAGES = ["/", "/pricing", "/docs", "/blog/hello", "/signup"]


@dataclass
class Fed:
    seconds: float
    batches: int
    accepted: int
    failed: int

    @property
    def rate(self) -> float:
        return self.accepted * PER_BATCH / self.seconds if self.seconds else 0.0


def _batch(key: str, origin: str, rng: random.Random) -> dict[str, Any]:
    now = time.time() * 1000
    events = []
    for _ in range(PER_BATCH):
        visitor = f"feed-{rng.randrange(50_000)}"
        custom = rng.random() < 0.1
        events.append(
            {
                "name": "signup" if custom else "pageview",
                "ts": now,
                "visitor_id": visitor,
                "session_id": f"{visitor}-{int(now // 1_800_000)}",
                "url": f"{origin}/",
                "path": rng.choice(PAGES),
                "referrer": rng.choice(["", "", "https://www.google.com/", "https://news.ycombinator.com/"]),
                "props": {"plan": "pro"} if custom else {},
            }
        )
    return {"key": key, "batch_id": secrets.token_urlsafe(18), "events": events}


def _run(
    base_url: str,
    key: str,
    origin: str,
    rate: int,
    stop: Any,
    sent: Synchronized[int],
    accepted: Synchronized[int],
    failed: Synchronized[int],
    began: Synchronized[float],
) -> None:
    import httpx
    import orjson

    interval = THREADS * PER_BATCH / rate  # seconds between two batches of one thread
    began.value = time.monotonic()  # the rate counts from here, after the process started

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        headers = {"Origin": origin, "User-Agent": CHROME, "Content-Type": "text/plain;charset=UTF-8"}
        with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
            due = time.monotonic() + seed * interval / THREADS
            while not stop.is_set():
                time.sleep(max(0.0, due - time.monotonic()))
                due += interval
                try:
                    answer = client.post("/i/events", content=orjson.dumps(_batch(key, origin, rng)))
                    ok = answer.status_code == 202
                except httpx.HTTPError:
                    ok = False
                with sent.get_lock():
                    sent.value += 1
                counter = accepted if ok else failed
                with counter.get_lock():
                    counter.value += 1

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class Feeder:
    def __init__(self, base_url: str, key: str, origin: str, rate: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._sent = context.Value("q", 0)
        self._accepted = context.Value("q", 0)
        self._failed = context.Value("q", 0)
        self._began = context.Value("d", 0.0)
        self._process = context.Process(
            target=_run,
            args=(
                base_url,
                key,
                origin,
                rate,
                self._stop,
                self._sent,
                self._accepted,
                self._failed,
                self._began,
            ),
            daemon=True,
        )
        self._started = 0.0

    def start(self) -> None:
        self._started = time.monotonic()
        self._process.start()

    def stop(self) -> Fed:
        self._stop.set()
        ended = time.monotonic()
        self._process.join(timeout=60)
        seconds = ended - (float(self._began.value) or self._started)
        return Fed(seconds, int(self._sent.value), int(self._accepted.value), int(self._failed.value))
