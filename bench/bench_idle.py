"""What an idle server costs: the CPU of ``sightline serve`` and of each of its child processes
while no request and no event arrives (a self-hosted instance at night), read from /proc.

A ``sightline serve`` as users run it (defaults, a clean environment) on a fresh data directory,
and, when ``BENCH_IDLE_DATA`` names a data directory, on a copy of it as well (the 10 M-event
bench data: a store and a log of that size). Once its store answers and everything settled
(``BENCH_IDLE_SETTLE`` seconds, default 20), the CPU time of the server, ingest's writer, the
store process, the recordings decoder and multiprocessing's resource tracker (each thread's
``/proc/PID/task/TID/schedstat``, in nanoseconds: clock ticks are too coarse for this) is read
over ``BENCH_IDLE_SECONDS`` (default 60) and printed as milliseconds of CPU per second (a tenth
of a per cent of one core each). No target: the figure to keep low.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.ingest_servers import free_port, wait_up


def cpu_ns(pid: int) -> int:
    """The CPU time of the process's threads now alive, in nanoseconds."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except OSError:  # a thread that just ended
            continue
    return total


def processes(server: int) -> dict[str, int]:
    """The server and its children by role (children are found under every thread)."""
    found = {"server": server}
    for task in Path(f"/proc/{server}/task").iterdir():
        for child in (task / "children").read_text().split():
            pid = int(child)
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"sightline.ingest.writer_process" in command:
                found["writer"] = pid
                continue
            if b"resource_tracker" in command:  # multiprocessing's, for the spawned children
                found["tracker"] = pid
                continue
            files = [os.readlink(f) for f in Path(f"/proc/{pid}/fd").iterdir() if f.is_symlink()]
            found["store" if any(f.endswith("store.duckdb") for f in files) else "decoder"] = pid
    return found


def idle_cpu(data_dir: Path, settle: float, seconds: float) -> dict[str, float]:
    """Milliseconds of CPU per second of each process of an idle server on ``data_dir``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    port = free_port()
    command = [sys.executable, "-m", "sightline.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(data_dir), "--log-level", "warning"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_up(f"http://127.0.0.1:{port}/healthz", server)
        deadline = time.monotonic() + 600
        while "store" not in processes(server.pid):  # opening a big store takes a while
            if time.monotonic() > deadline:
                raise RuntimeError("the store process did not start")
            time.sleep(0.5)
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
        time.sleep(settle)
        pids = processes(server.pid)
        before = {name: cpu_ns(pid) for name, pid in pids.items()}
        started = time.monotonic()
        time.sleep(seconds)
        after = {name: cpu_ns(pid) for name, pid in pids.items()}
        span = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=60)
    return {name: (after[name] - before[name]) / 1e6 / span for name in pids}


def main() -> int:
    settle = float(os.environ.get("BENCH_IDLE_SETTLE", "20"))
    seconds = float(os.environ.get("BENCH_IDLE_SECONDS", "60"))
    work = Path(tempfile.mkdtemp(prefix="sightline-bench-idle-"))
    try:
        cases = [("a fresh data directory", work / "fresh")]
        source = os.environ.get("BENCH_IDLE_DATA")
        if source:
            shutil.copytree(source, work / "copy", ignore=shutil.ignore_patterns("sightline.lock"))
            cases.append((f"a copy of {source}", work / "copy"))
        for what, data_dir in cases:
            figures = idle_cpu(data_dir, settle, seconds)
            load = os.getloadavg()[0]
            shown = ", ".join(f"{name} {value:.2f}" for name, value in figures.items())
            print(
                f"idle server on {what}, {seconds:.0f} s: ms of CPU per second: {shown}; "
                f"all {sum(figures.values()):.2f} (load {load:.1f})",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
