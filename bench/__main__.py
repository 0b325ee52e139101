"""Run every benchmark module (``bench/bench_*.py``), or the ones named: ``python -m bench ingest``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if argv:
        names = [n for n in names if any(word in n for word in argv)]
    failures = 0
    for name in names:
        print(f"== {name}", flush=True)
        module = importlib.import_module(f"bench.{name}")
        failures += int(module.main() or 0)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
