"""Ingest throughput and p99 latency with wrk, side by side with the machine's HTTP ceiling.

Four runs of ``wrk -t1 -c50`` (one load thread, as issue 11 states the measurement) against
``POST /i/events`` with a fresh batch id per request:
single-event requests and 20-event batches, each against ``sightline serve`` (SQLite, WAL,
synchronous=FULL: every 202 is on disk) and against a trivial Starlette endpoint that only parses
JSON (``bench/ceiling_app.py``, same uvicorn settings). Afterwards it checks that the database
holds every event wrk got a 202 for. Target: ingest >= 60 % of the ceiling's requests/s, p99 < 25 ms.
Each run also reports the CPU time per request of the server's process, of ingest's writer process
(which stores the events) and of the store process (which feeds the analytics store and answers the
dashboard's queries), read from /proc; the ceiling has neither. wrk's own CPU per request is
reported too: on this 2-core machine the load generator's share is part of the budget.

The server runs as users run it: its store process feeds the analytics store from the log while
wrk sends events, and an owner's dashboard asks for today's summary, time series and realtime
visitors every half second throughout (``BENCH_REPORTS=0`` stops the dashboard: a diagnostic);
each run's line says how many of its requests were answered during the run, on which the store
process's CPU per request depends.
After the runs it reports how long the store took to hold every acknowledged event.

Environment: ``BENCH_SECONDS`` (default 5) per run, ``BENCH_ROUNDS`` (default 3) alternating rounds;
the figures are the medians.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import func, select

CONNECTIONS = 50
THREADS = 1  # as issue 11 measured; -t2 (sessions 1-11) cost wrk 36-38 µs per request, -t1 31
TARGET_RATIO = 0.60
TARGET_P99_MS = 25.0
ORIGIN = "http://localhost:9999"
USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)

LUA = r"""
local counter = 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local function event(i)
  return string.format(
    '{"name":"pageview","ts":%d,"visitor_id":"v-%d","session_id":"s-%d","url":"http://localhost:9999/p/%d?utm_source=news",'
    .. '"path":"/p/%d","referrer":"https://www.google.com/","props":{"plan":"pro","n":%d},"screen":1280}',
    1700000000000 + i, i % 997, i % 331, i % 50, i % 50, i)
end
function request()
  counter = counter + 1
  local events = {}
  for i = 1, EVENTS do events[i] = event(counter * 100 + i) end
  local body = string.format('{"key":"%s","batch_id":"bench-%s-%d-%012d","events":[%s]}',
    KEY, RUN, tid, counter, table.concat(events, ","))
  return wrk.format("POST", "/i/events", HEADERS, body)
end
"""


@dataclass
class Result:
    label: str
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    errors: int
    load: float  # the machine's 1-minute load average at the end of the run
    cpu_us: float = float("nan")  # CPU of the server's process per request (µs)
    writer_cpu_us: float = float("nan")  # CPU of ingest's writer process per request
    store_cpu_us: float = float("nan")  # CPU of the store process per request (feed, dashboard)
    wrk_cpu_us: float = float("nan")  # CPU of wrk itself per request: the load generator's share
    reports: int = 0  # the dashboard's requests answered during the run (the store's share depends on it)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited with {process.returncode}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not start")


def lua_script(directory: Path, key: str, events: int, run: str) -> Path:
    headers = (
        "{"
        f'["Content-Type"]="text/plain;charset=UTF-8", ["Origin"]="{ORIGIN}", ["User-Agent"]="{USER_AGENT}"'
        "}"
    )
    path = directory / f"{run}.lua"
    path.write_text(f'KEY = "{key}"\nEVENTS = {events}\nRUN = "{run}"\nHEADERS = {headers}\n' + LUA, "utf-8")
    return path


def _ms(text: str) -> float:
    match = re.match(r"([\d.]+)(us|ms|s)", text)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def cpu_ticks(pid: int) -> tuple[int, int, int]:
    """(the server's, its writer's, its store process's) user + system CPU in clock ticks, from
    /proc (Linux). Children are found under every thread of the server: the store process is
    started from a worker thread, ingest's writer from the event loop."""

    def ticks(p: int) -> int:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime

    try:
        writer = store = 0
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                command = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"sightline.ingest.writer_process" in command:
                    writer += ticks(int(child))
                elif b"spawn_main" in command:  # multiprocessing: the store process
                    store += ticks(int(child))
        return ticks(pid), writer, store
    except (OSError, ValueError):
        return 0, 0, 0


def run_wrk(label: str, base_url: str, script: Path, seconds: int, pid: int | None = None) -> Result:
    command = [
        "wrk",
        f"-t{THREADS}",
        f"-c{CONNECTIONS}",
        f"-d{seconds}s",
        "--latency",
        "--timeout",
        "10s",
        "-s",
        str(script),
        base_url,
    ]
    before = cpu_ticks(pid) if pid else (0, 0, 0)
    wrk_before = resource.getrusage(resource.RUSAGE_CHILDREN)  # children waited for: wrk alone here
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    wrk_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    after = cpu_ticks(pid) if pid else (0, 0, 0)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    # Anchored: the "+/- Stdev" column of the thread stats (e.g. "85.50%") also ends in 50% or 99%.
    p50 = _ms(re.search(r"^\s*50%\s+(\S+)", output, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s*99%\s+(\S+)", output, re.M).group(1))  # type: ignore[union-attr]
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    server, writer, store = (
        (after[i] - before[i]) * tick_us / total if pid and total else float("nan") for i in range(3)
    )
    wrk_s = (wrk_after.ru_utime + wrk_after.ru_stime) - (wrk_before.ru_utime + wrk_before.ru_stime)
    return Result(
        label,
        rps,
        p50,
        p99,
        total,
        int(non_2xx.group(1)) if non_2xx else 0,
        sum(int(g) for g in errors.groups()) if errors else 0,
        os.getloadavg()[0],
        server,
        writer,
        store,
        wrk_s * 1e6 / total if total else float("nan"),
    )


def main() -> int:
    if shutil.which("wrk") is None:
        print("wrk is not installed: bash scripts/system-deps.sh wrk")
        return 1
    from sightline.accounts.users import create_user
    from sightline.sites.service import create_site
    from sightline.storage import open_database
    from sightline.storage.schema import events

    seconds = int(os.environ.get("BENCH_SECONDS", "5"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    work = Path(tempfile.mkdtemp(prefix="sightline-bench-"))
    db = open_database(f"sqlite:///{work / 'data' / 'sightline.db'}")
    with db.begin() as conn:
        owner = create_user(conn, "bench@example.com", "correct horse battery staple")
        site = create_site(conn, owner["id"], "Bench", "localhost:9999")
    key, site_id = site["key"], int(site["id"])
    ingest_port, ceiling_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    serve = [sys.executable, "-m", "sightline.cli", "serve", "--port", str(ingest_port)]
    serve += ["--data-dir", str(work / "data"), "--log-level", "warning"]
    ingest = subprocess.Popen(serve, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    uvicorn = [sys.executable, "-m", "uvicorn", "bench.ceiling_app:app", "--port", str(ceiling_port)]
    uvicorn += ["--log-level", "warning", "--no-access-log", "--no-server-header"]
    root = Path(__file__).resolve().parent.parent
    ceiling = subprocess.Popen(uvicorn, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results: list[Result] = []
    try:
        wait_up(f"http://127.0.0.1:{ingest_port}/healthz", ingest)
        wait_up(f"http://127.0.0.1:{ceiling_port}/", ceiling)
        dashboard = Dashboard(f"http://127.0.0.1:{ingest_port}", site_id)
        if os.environ.get("BENCH_REPORTS") != "0":
            dashboard.start()
        pids = {"ceiling": ceiling.pid, "ingest": ingest.pid}
        for name, port in (("ceiling", ceiling_port), ("ingest", ingest_port)):
            for per in (1, 20):
                warm = lua_script(work, key, per, f"warm-{name}-{per}")
                run_wrk(f"{name}-{per}", f"http://127.0.0.1:{port}", warm, 2)
        # Rounds alternate the two servers, so both see the same machine (others share it), and
        # which goes first alternates too: back-to-back runs favour the second one a little.
        for number in range(rounds):
            pair = [("ceiling", ceiling_port), ("ingest", ingest_port)]
            if number % 2:
                pair.reverse()
            for per in (1, 20):
                for name, port in pair:
                    label = f"{name}-{per}"
                    script = lua_script(work, key, per, f"{label}-r{number}")
                    answered = dashboard.requests - dashboard.failures
                    result = run_wrk(label, f"http://127.0.0.1:{port}", script, seconds, pids[name])
                    result.reports = dashboard.requests - dashboard.failures - answered
                    results.append(result)
        dashboard.stop()
        caught_up = dashboard.wait_for_store()
    finally:
        dashboard.stop()
        for process in (ingest, ceiling):
            process.terminate()
            process.wait(timeout=30)
    with db.read() as conn:
        rows = conn.execute(select(func.count()).select_from(events)).scalar_one()
    db.dispose()
    shutil.rmtree(work, ignore_errors=True)
    print(
        f"dashboard during the runs: {dashboard.requests} report requests, {dashboard.failures} failed, "
        f"p95 {dashboard.p95():.0f} ms; the store held every stored event {caught_up:.1f} s "
        "after the last run"
    )
    for error in sorted(set(dashboard.errors))[:5]:
        print(f"  a failed dashboard request: {error}")
    return report(results, rows) or (1 if dashboard.failures else 0)


class Dashboard:
    """An owner's dashboard open during the runs: today's summary, time series and realtime
    visitors every half second, in a thread; then, how long the store takes to catch up."""

    def __init__(self, base_url: str, site_id: int) -> None:
        import threading

        self.base_url = base_url
        self.site_id = site_id
        self.requests = 0
        self.failures = 0
        self.timings: list[float] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.client = httpx.Client(base_url=base_url, headers={"Origin": base_url}, timeout=30)
        answer = self.client.post(
            "/api/login", json={"email": "bench@example.com", "password": "correct horse battery staple"}
        )
        answer.raise_for_status()

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        base = f"/api/sites/{self.site_id}/reports"
        paths = [f"{base}/summary?range=today", f"{base}/timeseries?range=today", f"{base}/realtime"]
        while not self._stop.wait(0.5):
            for path in paths:
                started = time.perf_counter()
                try:
                    answer = self.client.get(path)
                    ok = answer.status_code == 200
                    if not ok:
                        self.errors.append(f"{answer.status_code} {answer.text[:200]}")
                except httpx.HTTPError as error:
                    ok = False
                    self.errors.append(repr(error))
                self.timings.append((time.perf_counter() - started) * 1000)
                self.requests += 1
                self.failures += not ok

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def p95(self) -> float:
        if len(self.timings) < 2:
            return self.timings[0] if self.timings else 0.0
        return statistics.quantiles(self.timings, n=20, method="inclusive")[18]

    def wait_for_store(self, timeout: float = 900) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            figures = self.client.get("/api/health").json()["services"]["store"]
            if figures["status"] != "down" and figures["lag_events"] == 0:
                return time.monotonic() - started
            time.sleep(0.2)
        return float("nan")


def median_of(results: list[Result], label: str) -> Result:
    runs = [r for r in results if r.label == label]
    return Result(
        label,
        statistics.median(r.requests_per_s for r in runs),
        statistics.median(r.p50_ms for r in runs),
        statistics.median(r.p99_ms for r in runs),
        sum(r.requests for r in runs),
        sum(r.non_2xx for r in runs),
        sum(r.errors for r in runs),
        statistics.median(r.load for r in runs),
        statistics.median(r.cpu_us for r in runs),
        statistics.median(r.writer_cpu_us for r in runs),
        statistics.median(r.store_cpu_us for r in runs),
        statistics.median(r.wrk_cpu_us for r in runs),
    )


def report(results: list[Result], rows: int) -> int:
    labels = ["ceiling-1", "ingest-1", "ceiling-20", "ingest-20"]
    rounds = len(results) // len(labels)
    print(f"wrk -t{THREADS} -c{CONNECTIONS}, {os.cpu_count()} cores, SQLite WAL synchronous=FULL, ", end="")
    print(f"medians of {rounds} alternating rounds; load average {os.getloadavg()[0]:.1f}")
    print(
        f"{'run':<12} {'req/s':>10} {'events/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8} "
        f"{'errors':>7} {'load':>5} {'cpu us/req':>11} {'writer us/req':>13} {'store us/req':>12} "
        f"{'wrk us/req':>10}"
    )
    by = {label: median_of(results, label) for label in labels}
    for r in by.values():
        per = 20 if r.label.endswith("-20") else 1
        print(
            f"{r.label:<12} {r.requests_per_s:>10.0f} {r.requests_per_s * per:>10.0f} {r.p50_ms:>8.2f} "
            f"{r.p99_ms:>8.2f} {r.non_2xx:>8} {r.errors:>7} {r.load:>5.1f} {r.cpu_us:>11.1f} "
            f"{r.writer_cpu_us:>13.1f} {r.store_cpu_us:>12.1f} {r.wrk_cpu_us:>10.1f}"
        )
    for r in results:
        print(
            f"  round run {r.label:<12} {r.requests_per_s:>8.0f} req/s  p50 {r.p50_ms:.1f} ms  "
            f"p99 {r.p99_ms:.1f} ms  load {r.load:.1f}  dashboard requests answered {r.reports}"
        )
    failures = 0
    for per in (1, 20):
        ingest, ceiling = by[f"ingest-{per}"], by[f"ceiling-{per}"]
        ratio = ingest.requests_per_s / ceiling.requests_per_s
        met = ratio >= TARGET_RATIO and ingest.p99_ms < TARGET_P99_MS
        print(
            f"{per:>2}-event requests: ingest at {ratio:.0%} of the ceiling, p99 {ingest.p99_ms:.1f} ms "
            f"(target >= {TARGET_RATIO:.0%}, < {TARGET_P99_MS:.0f} ms): {'met' if met else 'NOT met'}"
        )
    # Every 202 of the measured runs must be in the database (wrk counts the requests it got an
    # answer to; non-2xx answers are subtracted; warm-up runs add more rows on top).
    acknowledged = sum((r.requests - r.non_2xx) * (20 if r.label.endswith("-20") else 1)
                       for r in results if r.label.startswith("ingest"))  # fmt: skip
    print(f"stored events: {rows} (acknowledged in measured runs: {acknowledged})")
    if rows < acknowledged:
        print("LOST acknowledged events")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
