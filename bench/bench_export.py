"""CSV export latency: one 1000-row batch from a survey with 100,000 responses, over HTTP.

Seeds a fresh SQLite database through the surveys feature module (one published survey with a
rating, a single choice, a multiple choice and a text question; 100,000 responses), starts
``sightline serve`` on it, signs in, and times full ``GET /api/feedback/surveys/{id}/export``
requests (headers and the whole streamed body) at offset 0, at 99000 (the last full batch) and
at 100000 (the highest allowed offset: an empty batch here). Target: median < 50 ms at 99000.

Environment: ``BENCH_REPEAT`` (default 30) requests per offset.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from sightline.accounts.users import create_user
from sightline.database import open_database
from sightline.sites import service as sites_service
from sightline.surveys import service as surveys_service
from sightline.surveys.responses import Submission, store_responses

RESPONSES = 100_000
TARGET_MS = 50.0
EMAIL = "bench@example.com"
PASSWORD = "a long benchmark password"
QUESTIONS = [
    {"id": "score", "type": "rating", "title": "How likely are you to recommend us?", "scale": "0-10"},
    {
        "id": "plan",
        "type": "single_choice",
        "title": "Which plan?",
        "options": [{"id": "free", "label": "Free"}, {"id": "pro", "label": "Pro"}],
    },
    {
        "id": "liked",
        "type": "multiple_choice",
        "title": "What do you like?",
        "options": [
            {"id": "a", "label": "Speed"},
            {"id": "b", "label": "Price"},
            {"id": "c", "label": "Docs"},
        ],
    },
    {"id": "comment", "type": "text", "title": "Anything else?"},
]


def seed(url: str) -> int:
    """Owner, site, published survey and ``RESPONSES`` responses; returns the survey id."""
    db = open_database(url)
    started = time.perf_counter()
    with db.begin() as conn:
        owner_id = int(create_user(conn, EMAIL, PASSWORD)["id"])
        site = sites_service.create_site(conn, owner_id, "Bench", "bench.example.com")
        body = {"site_id": site["id"], "name": "Bench", "questions": QUESTIONS}
        survey_id = int(surveys_service.create_survey(conn, owner_id, body)["id"])
        surveys_service.publish_survey(conn, owner_id, survey_id)
        batch = [
            Submission(
                survey_id=survey_id,
                revision=1,
                response_id=f"bench-response-{index:08d}",
                visitor_id=f"visitor-{index % 5000}",
                page_path=f"/app/page/{index % 50}",
                answers={
                    "score": index % 11,
                    "plan": "pro" if index % 3 else "free",
                    "liked": ["a", "c"] if index % 2 else ["b"],
                    "comment": f'Response number {index}, with a comma and "quotes".',
                },
            )
            for index in range(RESPONSES)
        ]
        stored = store_responses(conn, int(site["id"]), survey_id, batch)
    db.dispose()
    assert stored == RESPONSES
    print(f"seeded {RESPONSES} responses in {time.perf_counter() - started:.1f} s")
    return survey_id


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    data_dir: Path, port: int, timeout: float = 120, options: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """``sightline serve`` on ``port`` (with ``options``) and a clean environment, once it answers
    /healthz (the timeout only decides how soon a failure is reported: a loaded machine starts a
    server slowly)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    command = [
        sys.executable,
        "-m",
        "sightline.cli",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *options,
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("sightline serve exited")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("sightline serve did not start")


def time_batches(client: httpx.Client, survey_id: int, offset: int, repeat: int) -> tuple[float, int]:
    """Median milliseconds of a full export request at ``offset``, and the rows it returned."""
    path = f"/api/feedback/surveys/{survey_id}/export?revision=1&offset={offset}"
    timings: list[float] = []
    rows = 0
    for _ in range(repeat + 2):
        started = time.perf_counter()
        response = client.get(path)
        body = response.content
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
        rows = body.count(b"\r\n") - 1  # no line breaks inside these cells
    return statistics.median(timings[2:]), rows


def main() -> int:
    repeat = int(os.environ.get("BENCH_REPEAT", "30"))
    work = Path(tempfile.mkdtemp(prefix="sightline-bench-export-"))
    process = None
    try:
        data_dir = work / "data"
        survey_id = seed(f"sqlite:///{data_dir / 'sightline.db'}")
        port = free_port()
        process = start_server(data_dir, port)
        origin = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=30) as client:
            login = client.post("/api/login", json={"email": EMAIL, "password": PASSWORD})
            assert login.status_code == 200, login.text
            results = {
                offset: time_batches(client, survey_id, offset, repeat) for offset in (0, 99_000, 100_000)
            }
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=15)
        shutil.rmtree(work, ignore_errors=True)
    for offset, (median, rows) in results.items():
        print(f"export offset {offset:>6}: {rows:>4} rows, median {median:6.1f} ms over {repeat} requests")
    worst = results[99_000][0]
    verdict = "ok" if worst < TARGET_MS else "TOO SLOW"
    print(f"highest full batch (offset 99000): median {worst:.1f} ms, target < {TARGET_MS:.0f} ms: {verdict}")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
