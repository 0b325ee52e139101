"""What a channel costs: the channels table and the channel filter against their source
counterparts, on a generated store (default 2 M events over 30 days, 4/5 of them one site's).

A channel is worked out by the query from the visit's source and UTM tags (``sightline.channels``)
rather than stored, so the comparison is the price of that expression: each pair of requests is
timed alternately (A, B, A, B, ...) so that the machine's other load falls on both alike. p50/p95
over ``BENCH_REPEAT`` rounds (default 20). ``BENCH_CHANNELS_EVENTS`` changes the size;
``BENCH_DIR`` keeps the generated store between runs; ``BENCH_PORT`` the server's port.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.bench_export import free_port, start_server
from bench.bench_reports import EMAIL, PASSWORD, p95
from bench.bench_scale import prepare
from bench.store_data import settle

PAIRS: list[tuple[str, dict[str, str], dict[str, str]]] = [
    ("table", {"dimension": "sources"}, {"dimension": "channels"}),
    ("summary filtered", {"source": "google.com"}, {"channel": "organic_search"}),
    ("summary filtered, is not", {"source": "!(none)"}, {"channel": "!direct"}),
    (
        "pages table filtered",
        {"dimension": "pages", "source": "google.com"},
        {"dimension": "pages", "channel": "organic_search"},
    ),
]


def _time(client: httpx.Client, site_id: int, params: dict[str, str]) -> float:
    report = "breakdown" if "dimension" in params else "summary"
    started = time.perf_counter()
    response = client.get(f"/api/sites/{site_id}/reports/{report}", params={"range": "30d", **params})
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.text
    return elapsed


def main() -> int:
    count = int(os.environ.get("BENCH_CHANNELS_EVENTS", "2000000"))
    repeat = int(os.environ.get("BENCH_REPEAT", "20"))
    keep = os.environ.get("BENCH_DIR")
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="sightline-bench-channels-"))
    data_dir = work / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    process = None
    try:
        site_id = prepare(data_dir, count, 2) + 1  # the second site holds 4/5 of the events
        settle(data_dir)
        port = int(os.environ.get("BENCH_PORT") or free_port())
        process = start_server(data_dir, port, timeout=120)
        origin = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=300) as client:
            assert client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).status_code == 200
            while client.get("/api/health").json()["services"]["store"]["status"] == "down":
                time.sleep(0.5)
            print(f"{'request (30 days)':<28} {'source p50':>10} {'p95':>7} {'channel p50':>12} {'p95':>7}")
            for name, by_source, by_channel in PAIRS:
                a: list[float] = []
                b: list[float] = []
                for _ in range(repeat):
                    a.append(_time(client, site_id, by_source))
                    b.append(_time(client, site_id, by_channel))
                print(
                    f"{name:<28} {statistics.median(a):10.1f} {p95(a):7.1f} "
                    f"{statistics.median(b):12.1f} {p95(b):7.1f}",
                    flush=True,
                )
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
