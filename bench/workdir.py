"""Where a benchmark keeps its generated data: ``BENCH_DIR`` if set; else, for a build that takes
minutes (``expensive``), a directory under the user's cache kept between runs
(``$XDG_CACHE_HOME/sightline-bench/NAME``, ``~/.cache`` without it); else a temporary directory
removed after the run.

Kept data ends at the time it was generated: ``stale`` says when it no longer looks like a live
site's (its last days empty, so a 7-day report reads less than a live one), and a benchmark that
feeds the server runs it on a ``scratch_copy``, so that the events it feeds (all of them today's)
do not pile up in the kept data and make each run read more than the one before."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

FRESH_HOURS = 12.0  # kept data generated longer ago than this is generated again


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


def stale(marker: Path) -> bool:
    """Whether the data ``marker`` stands for was generated more than ``FRESH_HOURS`` ago, to be
    generated again ending now (``BENCH_KEEP_STALE=1`` keeps it as it is)."""
    if not marker.exists() or os.environ.get("BENCH_KEEP_STALE"):
        return False
    hours = (time.time() - marker.stat().st_mtime) / 3600
    if hours <= FRESH_HOURS:
        return False
    print(f"the kept data was generated {hours:.0f} h ago, its last days are empty: generating it again")
    return True


@contextmanager
def scratch_copy(data_dir: Path) -> Iterator[Path]:
    """A copy of ``data_dir`` beside it for one run, removed afterwards."""
    copy = Path(tempfile.mkdtemp(prefix="run-", dir=data_dir.parent)) / data_dir.name
    started = time.monotonic()
    shutil.copytree(data_dir, copy)
    took = time.monotonic() - started
    print(f"running on a copy of the kept data ({size_of(copy)}, copied in {took:.0f} s)", flush=True)
    try:
        yield copy
    finally:
        remove(copy.parent)


def measured_on_copy(
    name: str, expensive: bool, prepare: Callable[[Path], int], measure: Callable[[Path, int], int]
) -> int:
    """``measure(copy, prepare(data))``: the data ``prepare`` generates or finds in ``work_dir(name,
    expensive)/data`` (it answers a figure of it, such as the measured site's id), measured on a
    ``scratch_copy`` of it; returns what ``measure`` returns (the figures that missed)."""
    work, keep = work_dir(name, expensive)
    data_dir = work / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        prepared = prepare(data_dir)
        with scratch_copy(data_dir) as run_dir:  # the events this run feeds go with the copy
            return measure(run_dir, prepared)
    finally:
        if keep:
            print(f"kept for the next run: {work} ({size_of(work)})")
        else:
            remove(work)
