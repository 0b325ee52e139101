"""A diagnostic for the ingest benchmark: an owner's dashboard open during a wrk run.

``with Dashboard(product):`` asks for today's summary, time series and realtime visitors every
half second from a thread of its own (signed in as the product's owner) and prints how many
requests it made, how many failed and their p95 when it stops. Not part of ingest's figure: it
takes CPU from the product and the ceiling alike.
"""

from __future__ import annotations

import statistics
import threading
import time
from types import TracebackType

import httpx

from bench.ingest_servers import EMAIL, PASSWORD, Product


class Dashboard:
    def __init__(self, product: Product) -> None:
        self.product = product
        self.timings: list[float] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Dashboard:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        p95 = statistics.quantiles(self.timings, n=20)[18] if len(self.timings) > 1 else float("nan")
        print(
            f"{self.product.name}: the dashboard made {len(self.timings)} requests during the run, "
            f"{len(self.errors)} failed, p95 {p95:.0f} ms"
        )
        for problem in sorted(set(self.errors))[:5]:
            print(f"  a failed dashboard request: {problem}")

    def _run(self) -> None:
        url = self.product.url
        with httpx.Client(base_url=url, headers={"Origin": url}, timeout=30) as client:
            client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).raise_for_status()
            site = client.get("/api/sites").json()["sites"][0]["id"]
            base = f"/api/sites/{site}/reports"
            paths = [f"{base}/summary?range=today", f"{base}/timeseries?range=today", f"{base}/realtime"]
            while not self._stop.wait(0.5):
                for path in paths:
                    started = time.perf_counter()
                    try:
                        answer = client.get(path)
                        if answer.status_code != 200:
                            self.errors.append(f"{answer.status_code} {answer.text[:200]}")
                    except httpx.HTTPError as error:
                        self.errors.append(repr(error))
                    self.timings.append((time.perf_counter() - started) * 1000)
