"""Where a benchmark keeps its generated data: ``BENCH_DIR`` if set; else, for a build that takes
minutes (``expensive``), a directory under the user's cache kept between runs
(``$XDG_CACHE_HOME/sightline-bench/NAME``, ``~/.cache`` without it); else a temporary directory
removed after the run."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def kept(name: str) -> Path:
    """Where ``work_dir(name, True)`` keeps its data when ``BENCH_DIR`` is not set."""
    chosen = os.environ.get("BENCH_DIR")
    if chosen:
        return Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sightline-bench" / name


def work_dir(name: str, expensive: bool) -> tuple[Path, bool]:
    """The directory and whether it is kept after the run."""
    if os.environ.get("BENCH_DIR"):
        return kept(name), True
    if expensive:
        path = kept(name)
        path.mkdir(parents=True, exist_ok=True)
        print(f"keeping the generated data in {path} for the next run (BENCH_DIR chooses another place)")
        return path, True
    return Path(tempfile.mkdtemp(prefix=f"sightline-bench-{name}-")), False


def size_of(path: Path) -> str:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return f"{total / 2**30:.2f} GiB"


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
