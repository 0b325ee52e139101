"""Survey responses summary: the figures of a revision with 100,000 responses, on SQLite.

Seeds a fresh SQLite database with ``bench_export``'s survey (a 0-10 rating, a single choice, a
multiple choice and a text question; 100,000 responses, the summary's whole bound) and times
``summarize`` (the handler's work, without HTTP) reading every response. Target: median under
500 ms, so the responses page opens within a second even at the bound.

Environment: ``BENCH_REPEAT`` (default 9) runs.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.bench_export import RESPONSES, seed
from sightline.database import open_database
from sightline.surveys.summary import summarize

TARGET_MS = 500.0


def main() -> int:
    repeat = int(os.environ.get("BENCH_REPEAT", "9"))
    work = Path(tempfile.mkdtemp(prefix="sightline-bench-summary-"))
    try:
        url = f"sqlite:///{work / 'sightline.db'}"
        survey_id = seed(url)
        db = open_database(url, migrate=False)
        timings: list[float] = []
        try:
            for _ in range(repeat):
                started = time.perf_counter()
                with db.read() as conn:
                    result = summarize(conn, 1, survey_id, None)
                timings.append((time.perf_counter() - started) * 1000)
        finally:
            db.dispose()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert result["summarized"] == RESPONSES
    median = statistics.median(timings)
    verdict = "ok" if median < TARGET_MS else "TOO SLOW"
    print(
        f"summary of {RESPONSES} responses: median {median:.0f} ms over {repeat} runs, "
        f"target < {TARGET_MS:.0f} ms: {verdict}"
    )
    return 0 if median < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
