"""Conversion reports on a site with 10 million events in the analytics store: the Goals panel
with 20 goals, a 4-step funnel over 30 days (whole and split by source), a 12-week retention
table and journeys 3 steps deep (next and previous), p50/p95 over ``BENCH_REPEAT`` rounds.

Uses the generated log of ``bench_reports`` (``BENCH_EVENTS``, default 10,000,000), kept between
runs in the same place (``bench/workdir.py``). Targets: the Goals panel p95 < 150 ms; funnel,
retention and journeys p95 < 500 ms.
"""

from __future__ import annotations

import os
import statistics

import httpx

from bench.bench_export import free_port, start_server
from bench.bench_reports import EMAIL, PASSWORD, p95, prepare, time_requests, wait_for_store
from bench.store_data import settle
from bench.workdir import remove, work_dir

GOALS_MS = 150.0
REPORT_MS = 500.0
PAGES = ["/", "/pricing", "/docs", "/signup", "/login"]
EVENTS = ["signup", "download", "play_video", "add_to_cart", "search"]


def goals() -> list[dict[str, object]]:
    """20 goals: pages exact, prefix and glob, events, one prop-narrowed and one with revenue."""
    out: list[dict[str, object]] = [
        {"name": f"Visited {p}", "kind": "page", "match": "exact", "path": p} for p in PAGES
    ]
    out += [
        {"name": f"Blog {i}", "kind": "page", "match": "prefix", "path": f"/blog/post-{i}"} for i in range(6)
    ]
    out += [{"name": "Any blog", "kind": "page", "match": "glob", "path": "/blog/*"}]
    out += [{"name": f"Sent {e}", "kind": "event", "event": e} for e in EVENTS]
    out += [
        {"name": "Pro signup", "kind": "event", "event": "signup", "prop": {"key": "plan", "value": "pro"}},
        {
            "name": "Cart",
            "kind": "event",
            "event": "add_to_cart",
            "revenue": {"prop": "value", "currency": "EUR"},
        },
        {"name": "Videos", "kind": "event", "event": "play_video", "prop": {"key": "plan", "value": "free"}},
    ]
    return out


def requests_of(site_id: int) -> list[tuple[str, str, dict[str, str] | list[tuple[str, str]]]]:
    base = f"/api/sites/{site_id}/reports"
    steps = [
        ("step", "page:/"),
        ("step", "page:/pricing"),
        ("step", "page:/signup"),
        ("step", "event:signup"),
    ]
    return [
        ("goals panel 30d", f"{base}/breakdown", {"range": "30d", "dimension": "goals", "limit": "100"}),
        ("goals panel 7d", f"{base}/breakdown", {"range": "7d", "dimension": "goals", "limit": "100"}),
        ("funnel 4 steps 30d", f"{base}/funnel", [("range", "30d"), *steps]),
        ("funnel by source 30d", f"{base}/funnel", [("range", "30d"), ("dimension", "sources"), *steps]),
        ("retention 12 weeks", f"{base}/retention", {"range": "30d", "interval": "week", "periods": "12"}),
        ("journeys next 3 30d", f"{base}/journeys", {"range": "30d", "from": "page:/pricing", "depth": "3"}),
        (
            "journeys previous 3 30d",
            f"{base}/journeys",
            {"range": "30d", "from": "event:signup", "direction": "previous", "depth": "3"},
        ),
    ]


def main() -> int:
    count = int(os.environ.get("BENCH_EVENTS", "10000000"))
    repeat = int(os.environ.get("BENCH_REPEAT", "20"))
    work, keep = work_dir(f"reports-{count}", count >= 1_000_000)  # the reports benchmark's log
    data_dir = work / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    process = None
    failures = 0
    try:
        site_id = prepare(data_dir, count)
        port = free_port()
        settle(data_dir)  # the steady state: settled spans in site order
        process = start_server(data_dir, port)
        origin = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=120) as client:
            assert client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).status_code == 200
            wait_for_store(client)
            have = {g["name"] for g in client.get(f"/api/sites/{site_id}/goals").json()["goals"]}
            for goal in goals():
                if goal["name"] not in have:
                    created = client.post(f"/api/sites/{site_id}/goals", json=goal)
                    assert created.status_code == 201, created.text
            print(f"{'request':<30} {'p50 ms':>8} {'p95 ms':>8}")
            timings = time_requests(client, requests_of(site_id), repeat)  # type: ignore[arg-type]
            for name, values in timings.items():
                target = GOALS_MS if name.startswith("goals") else REPORT_MS
                slow = p95(values) >= target
                failures += slow
                flag = "  TOO SLOW" if slow else ""
                print(f"{name:<30} {statistics.median(values):8.1f} {p95(values):8.1f}{flag}", flush=True)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=15)
        if not keep:
            remove(work)
    print(
        "target: goals panel p95 < 150 ms, funnel/retention/journeys p95 < 500 ms: "
        + ("ok" if not failures else "MISSED")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
