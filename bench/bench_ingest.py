"""Ingest throughput, p99 latency and CPU per acknowledged event, against the machine's HTTP ceiling.

``wrk -t1 -c50`` (one load thread) sends ``POST /i/events`` with a fresh batch id per request,
single-event requests and 20-event batches, to ``sightline serve`` (SQLite, WAL,
synchronous=FULL: every 202 is on disk) and to a trivial Starlette endpoint that only parses JSON
(``bench/ceiling_app.py``, the same uvicorn settings): the ceiling. Each run has the machine to
itself as far as the benchmark goes: nothing else is sent to either server during a wrk run, and
after each of the product's runs the benchmark waits until the analytics store holds every stored
event (its lag in ``/api/health`` is 0) before the next run starts; that catch-up time is reported.

CPU is read from /proc for every process of each server's tree (the server, ingest's writer, the
store process, multiprocessing's resource tracker, any other child; ``bench/proctree.py``). The
product's figure is its whole tree's CPU from the start of a wrk run until the store caught up,
divided by the events acknowledged with a 202: what an event costs the product end to end. The
ceiling's is its CPU per request in the same rounds; wrk's own CPU per request is printed too (on a
2-core machine the load generator's share is part of the budget).

``BENCH_BASELINE=<git ref>`` also runs the product at that ref (a ``git worktree`` in a temporary
directory, on the same virtual environment, ``bench/baseline.py``), alternated with the current
code round by round, so that a change's cost is measured before and after in one run.
``BENCH_DASHBOARD=1`` adds a diagnostic run per product with an owner's dashboard polling today's
summary, time series and realtime visitors every half second during wrk (labelled as such).

Environment: ``BENCH_SECONDS`` (default 5) per run, ``BENCH_ROUNDS`` (default 3) rounds; the
servers' order rotates each round and the figures are medians. Target: ingest >= 60 % of the
ceiling's requests/s and p99 < 25 ms (single events). Afterwards each product's database must
hold every event wrk got a 202 for.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.baseline import Baseline
from bench.ingest_dashboard import Dashboard
from bench.ingest_servers import ORIGIN_HOST, Ceiling, Product, Server
from bench.proctree import spent

CONNECTIONS = 50
THREADS = 1  # one load thread: the second costs wrk more CPU per request than it adds
SIZES = (1, 20)
TARGET_RATIO = 0.60
TARGET_P99_MS = 25.0
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
    server: str  # ceiling, ingest, baseline (or one of them with "+dashboard")
    per: int  # events per request
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    errors: int
    load: float  # the machine's 1-minute load average at the end of the run
    wrk_cpu_s: float
    cpu_s: dict[str, float] = field(default_factory=dict)  # per role, from the run's start to caught up
    catch_up_s: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.server}-{self.per}"

    @property
    def acknowledged(self) -> int:
        return (self.requests - self.non_2xx) * self.per

    def us_per_event(self, role: str = "total") -> float:
        return self.cpu_s.get(role, 0.0) * 1e6 / self.acknowledged if self.acknowledged else float("nan")

    def us_per_request(self, role: str = "total") -> float:
        return self.cpu_s.get(role, 0.0) * 1e6 / self.requests if self.requests else float("nan")


def lua_script(directory: Path, key: str, events: int, run: str) -> Path:
    headers = (
        "{"
        f'["Content-Type"]="text/plain;charset=UTF-8", ["Origin"]="http://{ORIGIN_HOST}", '
        f'["User-Agent"]="{USER_AGENT}"'
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


def run_wrk(server: Server, per: int, script: Path, seconds: int, name: str = "") -> Result:
    """One wrk run against ``server``; for the product, CPU is read until its store caught up."""
    command = ["wrk", f"-t{THREADS}", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency"]
    command += ["--timeout", "10s", "-s", str(script), server.url]
    before = server.tree.cpu()
    wrk_before = resource.getrusage(resource.RUSAGE_CHILDREN)  # children waited for: wrk alone here
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    wrk_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    catch_up = server.caught_up()
    cpu = spent(before, server.tree.cpu())
    total = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    # Anchored: the "+/- Stdev" column of the thread stats (e.g. "85.50%") also ends in 50% or 99%.
    p50 = _ms(re.search(r"^\s*50%\s+(\S+)", output, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s*99%\s+(\S+)", output, re.M).group(1))  # type: ignore[union-attr]
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    wrk_s = (wrk_after.ru_utime + wrk_after.ru_stime) - (wrk_before.ru_utime + wrk_before.ru_stime)
    return Result(
        name or server.name,
        per,
        float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),  # type: ignore[union-attr]
        p50,
        p99,
        total,
        int(non_2xx.group(1)) if non_2xx else 0,
        sum(int(g) for g in errors.groups()) if errors else 0,
        load,
        wrk_s,
        cpu,
        catch_up,
    )


def main() -> int:
    if shutil.which("wrk") is None:
        print("wrk is not installed: bash scripts/system-deps.sh wrk")
        return 1
    seconds = int(os.environ.get("BENCH_SECONDS", "5"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    ref = os.environ.get("BENCH_BASELINE")
    work = Path(tempfile.mkdtemp(prefix="sightline-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    baseline = Baseline(ref) if ref else None
    servers: list[Server] = []
    results: list[Result] = []
    diagnostics: list[Result] = []
    try:
        servers.append(Ceiling(env))
        servers.append(Product("ingest", work, env))
        if baseline is not None:
            servers.append(Product("baseline", work, baseline.env(env)))
            print(f"baseline: {ref} at {baseline.commit}, against the current tree", flush=True)
        for server in servers:  # warm-up runs, not counted
            for per in SIZES:
                run_wrk(server, per, lua_script(work, server.key, per, f"warm-{server.name}-{per}"), 2)
        for number in range(rounds):
            order = servers[number % len(servers) :] + servers[: number % len(servers)]
            for per in SIZES:
                for server in order:
                    script = lua_script(work, server.key, per, f"{server.name}-{per}-r{number}")
                    results.append(run_wrk(server, per, script, seconds))
        if os.environ.get("BENCH_DASHBOARD") == "1":
            for server in servers[1:]:
                assert isinstance(server, Product)
                with Dashboard(server):
                    script = lua_script(work, server.key, 1, f"{server.name}-dashboard")
                    diagnostics.append(run_wrk(server, 1, script, seconds, f"{server.name}+dashboard"))
        stored = {server.name: server.stored() for server in servers[1:]}
    finally:
        for server in servers:
            server.stop()
        if baseline is not None:
            baseline.close()
        shutil.rmtree(work, ignore_errors=True)
    return report(results, diagnostics, stored, baseline.commit if baseline else None)


def median_of(runs: list[Result]) -> Result:
    roles = runs[0].cpu_s.keys()
    return Result(
        runs[0].server,
        runs[0].per,
        statistics.median(r.requests_per_s for r in runs),
        statistics.median(r.p50_ms for r in runs),
        statistics.median(r.p99_ms for r in runs),
        sum(r.requests for r in runs),
        sum(r.non_2xx for r in runs),
        sum(r.errors for r in runs),
        statistics.median(r.load for r in runs),
        sum(r.wrk_cpu_s for r in runs),
        {role: sum(r.cpu_s[role] for r in runs) for role in roles},
        statistics.median(r.catch_up_s for r in runs),
    )


def print_runs(runs: list[Result]) -> None:
    print(
        f"{'run':<20} {'req/s':>8} {'events/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'non-2xx':>7} "
        f"{'errors':>6} {'load':>5} {'catch-up s':>10} | µs of CPU per event: {'server':>7} "
        f"{'writer':>7} {'store':>7} {'other':>6} {'total':>7} | {'wrk µs/req':>10}"
    )
    for result in runs:
        ceiling = result.server == "ceiling"
        cpu = " ".join(
            f"{(result.us_per_request(role) if ceiling else result.us_per_event(role)):>{w}.1f}"
            for role, w in (("server", 7), ("writer", 7), ("store", 7), ("other", 6), ("total", 7))
        )
        print(
            f"{result.label:<20} {result.requests_per_s:>8.0f} {result.requests_per_s * result.per:>9.0f} "
            f"{result.p50_ms:>7.2f} {result.p99_ms:>7.2f} {result.non_2xx:>7} {result.errors:>6} "
            f"{result.load:>5.1f} {result.catch_up_s:>10.2f} | "
            f"{'':>21}{cpu} | {result.wrk_cpu_s * 1e6 / max(result.requests, 1):>10.1f}"
        )


def report(
    results: list[Result], diagnostics: list[Result], stored: dict[str, int], baseline: str | None
) -> int:
    rounds = len([r for r in results if r.label == "ceiling-1"])
    print(
        f"wrk -t{THREADS} -c{CONNECTIONS}, {os.cpu_count()} cores, SQLite WAL synchronous=FULL, nothing "
        f"else sent to the servers, the store caught up after each run; medians of {rounds} rounds; "
        f"load average now {os.getloadavg()[0]:.1f}"
    )
    print("(the ceiling's CPU is per request; the product's per acknowledged event, its run and catch-up)")
    labels = list(dict.fromkeys(r.label for r in results))
    by = {label: median_of([r for r in results if r.label == label]) for label in labels}
    print_runs(list(by.values()))
    print("each round:")
    print_runs(results)
    failures = 0
    for per in SIZES:
        ceiling = by[f"ceiling-{per}"]
        for name in ("ingest", "baseline"):
            ours = by.get(f"{name}-{per}")
            if ours is None:
                continue
            ratio = ours.requests_per_s / ceiling.requests_per_s
            per_request = ours.us_per_event() * per
            line = (
                f"{per:>2}-event requests, {name}: {ratio:.0%} of the ceiling's requests/s, p99 "
                f"{ours.p99_ms:.1f} ms; {ours.us_per_event():.0f} µs of CPU per event (every process, "
                f"until in the analytics store), {per_request:.0f} per request against the ceiling's "
                f"{ceiling.us_per_request():.0f}: {per_request / ceiling.us_per_request():.2f}x"
            )
            if per == 1 and name == "ingest":
                met = ratio >= TARGET_RATIO and ours.p99_ms < TARGET_P99_MS
                verdict = "met" if met else "NOT met"
                line += f" (target >= {TARGET_RATIO:.0%}, < {TARGET_P99_MS:.0f} ms: {verdict})"
            print(line)
        if baseline and f"baseline-{per}" in by:
            new, old = by[f"ingest-{per}"], by[f"baseline-{per}"]
            print(
                f"{per:>2}-event requests, current against baseline {baseline}: events/s "
                f"{new.requests_per_s / old.requests_per_s - 1:+.1%}, p99 {new.p99_ms:.1f} against "
                f"{old.p99_ms:.1f} ms, CPU per event {new.us_per_event() / old.us_per_event() - 1:+.1%}"
            )
    if diagnostics:
        print("diagnostic, not the figure: single events with an owner's dashboard polling during wrk")
        print_runs(diagnostics)
    for name, rows in stored.items():
        # wrk counts the requests it got an answer to; warm-up and diagnostic runs add rows on top.
        acknowledged = sum(r.acknowledged for r in results if r.server == name)
        print(f"{name}: stored events {rows:,} (acknowledged in measured runs: {acknowledged:,})")
        if rows < acknowledged:
            print(f"{name}: LOST acknowledged events")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
