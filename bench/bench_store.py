"""The analytics store as users run it: its feed rate from a backlog, freshness under load, memory.

0. **The feed rate (bar: at least 50,000 events/s for 60 s).** A SQLite log of
   ``BENCH_STORE_BACKLOG`` events (default 6,000,000, one site over 60 days:
   ``bench/reports_data.py``), or a copy of the log ``BENCH_STORE_LOG`` names (by default the
   10 M-event ``sightline.db`` the reports benchmark keeps, ``bench/workdir.py``, when there is
   one and ``BENCH_QUICK`` is not set), and no
   store: ``sightline serve`` starts, and its store process feeds the backlog as it would after an
   upgrade or a long outage. From the first event fed, health's ``fed_events`` and the store
   process's CPU (``/proc``) are sampled every second for ``BENCH_STORE_SECONDS`` (at least 60);
   reported: events/s over that window (and over its first and last 10 s), the store process's
   CPU per event, and the machine's load. The CPU per event is what compares across runs on a
   shared machine; the rate is the bar, and only a quiet machine's counts.

Then a second ``sightline serve`` (SQLite log, DuckDB store, everything on), empty, and:

1. **Freshness at 20,000 events/s.** wrk sends 20-event batches paced to about 1,000 requests/s
   (100 connections, each waiting 95 ms after every answer: ``delay()``; the rate reached is
   printed) for ``BENCH_STORE_SECONDS`` (default 60); meanwhile a probe sends one event with a
   path of its own every half second and times, from its 202, until the pages breakdown of the
   dashboard (``search`` for that path) shows it. Target: p95 under 5 s.
2. **Sustained feeding.** wrk sends 20-event batches as fast as ingest takes them for the same
   time; the store's ``fed_events`` is sampled every second from health. Reported: events/s
   acknowledged, events/s fed into the store over the run, the largest lag, and the time the
   store needs afterwards to hold every acknowledged event. This is ingest's rate, not the store's
   (ingest takes about 28,000 events/s on this machine): a diagnostic of both together.
3. The resident memory of the server and of its child processes (ingest's writer, the store).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.bench_ingest import USER_AGENT, lua_script
from bench.ingest_servers import ORIGIN_HOST, free_port, wait_up
from bench.proctree import Tree
from bench.reports_data import insert as insert_events
from bench.workdir import kept

EMAIL = "bench@example.com"
FEED_EMAIL = "feed-bench@example.com"
PASSWORD = "correct horse battery staple"
PACED = """
function delay()
  return DELAY_MS
end
"""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Probe:
    """One fresh event every half second; seconds from its 202 until the dashboard shows it."""

    def __init__(self, base: str, client: httpx.Client, key: str, site_id: int) -> None:
        self.base, self.client, self.key, self.site_id = base, client, key, site_id
        self.delays: list[float] = []
        self.missed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        sdk = httpx.Client(base_url=self.base, timeout=30)
        headers = {"Origin": f"http://{ORIGIN_HOST}", "User-Agent": USER_AGENT}
        headers["Content-Type"] = "text/plain;charset=UTF-8"
        while not self._stop.wait(0.5):
            path = f"/fresh-{uuid.uuid4().hex[:12]}"
            event = {
                "name": "pageview",
                "ts": int(time.time() * 1000),
                "visitor_id": "probe",
                "session_id": "probe",
                "url": f"http://{ORIGIN_HOST}{path}",
                "path": path,
                "screen": 1280,
            }
            body = {"key": self.key, "batch_id": uuid.uuid4().hex, "events": [event]}
            answer = sdk.post("/i/events", json=body, headers=headers)
            if answer.status_code != 202:
                self.missed += 1
                continue
            acknowledged = time.monotonic()
            while time.monotonic() - acknowledged < 60:
                rows = self.client.get(
                    f"/api/sites/{self.site_id}/reports/breakdown",
                    params={"dimension": "pages", "range": "today", "search": path},
                ).json()["rows"]
                if rows:
                    self.delays.append(time.monotonic() - acknowledged)
                    break
                time.sleep(0.05)
            else:
                self.missed += 1
        sdk.close()

    def __enter__(self) -> Probe:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=90)


def store_figures(client: httpx.Client) -> dict[str, object]:
    figures: dict[str, object] = client.get("/api/health").json()["services"]["store"]
    return figures


def wrk(url: str, script: Path, seconds: int, threads: int, connections: int) -> str:
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def requests_of(output: str) -> int:
    for line in output.splitlines():
        if "requests in" in line:
            return int(line.split()[0])
    return 0


def serve(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """``sightline serve`` as users run it (defaults, a clean environment), once it answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    command = [sys.executable, "-m", "sightline.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(data_dir), "--log-level", "warning"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_up(f"http://127.0.0.1:{port}/healthz", server)
    return server


def backlog_log(data_dir: Path) -> str:
    """The log to feed, with an owner ``FEED_EMAIL`` to read health: a copy of ``BENCH_STORE_LOG``,
    or ``BENCH_STORE_BACKLOG`` generated events of one site."""
    from sightline.accounts.users import create_user
    from sightline.database import open_database
    from sightline.sites.service import create_site

    data_dir.mkdir(parents=True)
    source = os.environ.get("BENCH_STORE_LOG")
    reports = kept("reports-10000000") / "data" / "sightline.db"
    if not source and reports.exists() and os.environ.get("BENCH_QUICK") != "1":
        source = str(reports)  # the reports benchmark's 10 M-event log, copied
    if source:
        for suffix in ("", "-wal"):
            if Path(source + suffix).exists():
                shutil.copyfile(source + suffix, data_dir / f"sightline.db{suffix}")
    db = open_database(f"sqlite:///{data_dir / 'sightline.db'}")
    with db.begin() as conn:
        owner = create_user(conn, FEED_EMAIL, PASSWORD)
        site = create_site(conn, owner["id"], "Backlog", "backlog.example.com")
    db.dispose()
    if source:
        return f"a copy of {source}"
    count = int(os.environ.get("BENCH_STORE_BACKLOG", "6000000"))
    insert_events(str(data_dir / "sightline.db"), int(site["id"]), count, 60, datetime.now(UTC))
    return f"{count:,} generated events"


def feed_rate(seconds: int) -> int:
    """The store process feeding a backlog: events/s and CPU per event (0: the bar met)."""
    work = Path(tempfile.mkdtemp(prefix="sightline-bench-feed-"))
    server = None
    try:
        what = backlog_log(work / "data")
        port = free_port()
        server = serve(work / "data", port)
        base = f"http://127.0.0.1:{port}"
        client = httpx.Client(base_url=base, headers={"Origin": base}, timeout=60)
        client.post("/api/login", json={"email": FEED_EMAIL, "password": PASSWORD}).raise_for_status()
        tree = Tree(server.pid)
        samples: list[tuple[float, int, int, float]] = []  # (time, fed, lag, store CPU seconds)
        while True:
            figures = store_figures(client)
            fed, lag = int(str(figures.get("fed_events") or 0)), int(str(figures.get("lag_events") or 0))
            now = time.monotonic()
            if fed:
                samples.append((now, fed, lag, tree.cpu()["store"]))
                step_done = next(s[0] for s in samples if s[1] == fed)  # when the last step ended
                if step_done - samples[0][0] >= seconds or not lag:
                    break
            elif now - (samples[0][0] if samples else now) > 120:
                raise RuntimeError("the store process fed nothing in 120 s")
            time.sleep(1.0 - (time.monotonic() - now) % 1.0)
        load = os.getloadavg()[0]
        client.close()
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    # From the first sample that saw a step done to the first that saw the last one (a step of a
    # backlog feeds 122,880 events: the window ends where one ended, not halfway through one).
    first = samples[0]
    last = next(s for s in samples if s[1] == samples[-1][1])
    span, fed = last[0] - first[0], last[1] - first[1]
    rate = fed / span if span else 0.0
    cpu_us = (last[3] - first[3]) * 1e6 / fed if fed else float("nan")

    def rate_between(earlier: tuple[float, int, int, float], later: tuple[float, int, int, float]) -> float:
        return (later[1] - earlier[1]) / (later[0] - earlier[0]) if later[0] > earlier[0] else 0.0

    early = rate_between(first, next((s for s in samples if s[0] - first[0] >= 10), last))
    late = rate_between(next((s for s in samples if last[0] - s[0] <= 10), first), last)
    ran_out = not last[2]
    print(
        f"feed rate from a backlog ({what}): {rate:,.0f} events/s over {span:.1f} s "
        f"(first 10 s {early:,.0f}/s, last 10 s {late:,.0f}/s), {fed:,} events, store process "
        f"{cpu_us:.1f} µs of CPU per event, load {load:.1f}"
        + (" (the backlog ran out: raise BENCH_STORE_BACKLOG)" if ran_out else "")
        + " (target: >= 50,000 events/s for 60 s)"
    )
    return int(rate < 50_000 or ran_out)


def main() -> int:
    seconds = int(os.environ.get("BENCH_STORE_SECONDS", "60"))
    failures = feed_rate(seconds if os.environ.get("BENCH_QUICK") == "1" else max(seconds, 60))
    from sightline.accounts.users import create_user
    from sightline.database import open_database
    from sightline.sites.service import create_site

    work = Path(tempfile.mkdtemp(prefix="sightline-bench-store-"))
    db = open_database(f"sqlite:///{work / 'data' / 'sightline.db'}")
    with db.begin() as conn:
        owner = create_user(conn, EMAIL, PASSWORD)
        site = create_site(conn, owner["id"], "Bench", "localhost:9999")
    db.dispose()
    key, site_id = site["key"], int(site["id"])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = serve(work / "data", port)
    try:
        client = httpx.Client(base_url=base, headers={"Origin": base}, timeout=60)
        client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).raise_for_status()
        while store_figures(client)["status"] == "down":
            time.sleep(0.2)

        paced = lua_script(work, key, 20, "paced")
        paced.write_text(paced.read_text("utf-8") + PACED.replace("DELAY_MS", "95"))
        with Probe(base, client, key, site_id) as probe:
            output = wrk(base, paced, seconds, 2, 100)
        sent = requests_of(output) * 20 / seconds
        delays = sorted(probe.delays)
        p50 = statistics.median(delays) if delays else float("nan")
        p95 = statistics.quantiles(delays, n=20, method="inclusive")[18] if len(delays) > 1 else float("nan")
        print(
            f"freshness at {sent:,.0f} events/s for {seconds} s: {len(delays)} probes, "
            f"p50 {p50:.2f} s, p95 {p95:.2f} s, max {max(delays, default=float('nan')):.2f} s, "
            f"missed {probe.missed} (target p95 < 5 s)"
        )
        failures += not p95 < 5 or probe.missed > 0
        while store_figures(client)["lag_events"]:
            time.sleep(0.5)

        flat = lua_script(work, key, 20, "sustained")
        before = store_figures(client)
        samples: list[tuple[float, int, int]] = []
        done = threading.Event()

        def sample() -> None:
            while not done.wait(1.0):
                figures = store_figures(client)
                samples.append(
                    (time.monotonic(), int(str(figures["fed_events"])), int(str(figures["lag_events"])))
                )

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        output = wrk(base, flat, seconds, 2, 50)
        ended = time.monotonic()
        done.set()
        sampler.join()
        acknowledged = requests_of(output) * 20
        after_run = store_figures(client)
        while int(str(store_figures(client)["lag_events"])):
            time.sleep(0.2)
        caught_up = time.monotonic() - ended
        fed_in_run = int(str(after_run["fed_events"])) - int(str(before["fed_events"]))
        rate = fed_in_run / (ended - started)
        print(
            f"sustained for {seconds} s: {acknowledged / (ended - started):,.0f} events/s acknowledged, "
            f"{rate:,.0f} events/s fed into the store during the run, largest lag "
            f"{max((s[2] for s in samples), default=0):,} events, all in the store {caught_up:.1f} s after "
            "the run (ingest's rate, not the store's: a diagnostic)"
        )
        pids = {"server": server.pid, **{f"child {c}": c for c in children(server.pid)}}
        memory = ", ".join(f"{name} {rss_mb(pid):,.0f} MiB" for name, pid in pids.items())
        size = sum(p.stat().st_size for p in (work / "data").glob("store.duckdb*"))
        total = int(str(store_figures(client)["fed_events"]))
        print(f"resident memory: {memory}; store {size / 2**20:,.0f} MiB for {total:,} events")
        client.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
