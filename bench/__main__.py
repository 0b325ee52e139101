"""Run every benchmark module (``bench/bench_*.py``), or the ones named: ``python -m bench ingest``.

``BENCH_QUICK=1`` runs each at a small size (the sizes below, unless the environment sets them)
to check that it works end to end: its figures mean nothing, a missed target does not fail the
run, and a module that raises does.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from pathlib import Path

QUICK = {
    "BENCH_SECONDS": "2",  # ingest
    "BENCH_ROUNDS": "1",
    "BENCH_EVENTS": "100000",  # reports, conversions
    "BENCH_REPEAT": "2",
    "BENCH_FED_REPEAT": "2",
    "BENCH_SCALE_EVENTS": "300000",
    "BENCH_SCALE_SITES": "5",
    "BENCH_STORE_BACKLOG": "300000",
    "BENCH_STORE_SECONDS": "10",
    "BENCH_IDLE_SETTLE": "3",
    "BENCH_IDLE_SECONDS": "5",
    "BENCH_LOG_SECONDS": "10",  # a writer process takes seconds to start on a loaded machine
    "BENCH_GEO_EVENTS": "20000",
    "BENCH_RUNS": "3",  # console
    "BENCH_SDK_RUNS": "3",
    "BENCH_REC_SECONDS": "10",
    "BENCH_REC_RUNS": "3",
}


def main(argv: list[str]) -> int:
    quick = os.environ.get("BENCH_QUICK") == "1"
    if quick:
        for name, value in QUICK.items():
            os.environ.setdefault(name, value)
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if argv:
        names = [n for n in names if any(word in n for word in argv)]
    failures: list[str] = []
    for name in names:
        print(f"== {name}", flush=True)
        try:
            missed = int(importlib.import_module(f"bench.{name}").main() or 0)
        except Exception:  # one module's crash is reported, the others still run
            traceback.print_exc()
            failures.append(f"{name} (raised)")
            continue
        if missed and not quick:
            failures.append(name)
    if failures:
        print("failed: " + ", ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
