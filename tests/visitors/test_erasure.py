"""Erasing and exporting one visitor: before/after counts in every table, files on disk, the CLI."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import orjson
import pytest
from sqlalchemy import func, select

from sightline.database import Database, open_database
from sightline.database.schema import erasures, events, recordings, store_tasks, survey_responses
from tests.conftest import sign_in
from tests.ingest.helpers import Site, Visitor, batch, event
from tests.recordings.helpers import (
    RecordingSite,
    chunk,
    new_recording_id,
    page_events,
    post_chunk,
    stored_chunk_files,
)
from tests.support.server import LiveServer
from tests.surveys.helpers import create_survey, publish, seed_responses

GONE, KEPT = "visitor-to-erase", "visitor-who-stays"


@pytest.fixture
def owner(console_server: LiveServer) -> Iterator[httpx.Client]:
    client = sign_in(console_server)
    yield client
    client.close()


@pytest.fixture
def server_db(console_server: LiveServer) -> Iterator[Database]:
    assert console_server.database_url is not None
    database = open_database(console_server.database_url, migrate=False)
    yield database
    database.dispose()


def _count(db: Database, table: object, *where: object) -> int:
    with db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar_one())  # type: ignore[arg-type]


def _seed(server: LiveServer, owner: httpx.Client, db: Database) -> tuple[Site, dict[str, str]]:
    """A site where both visitors have events, a recording and a survey response."""
    site = Site.create(owner, f"localhost:{21700 + int(time.time() * 1000) % 10000}")
    owner.patch(f"/api/sites/{site.id}", json={"recording_enabled": True})
    recording_site = RecordingSite(site.id, site.key, site.origin)
    with Visitor(server.base_url, site) as browser:
        for visitor in (GONE, KEPT):
            body = batch(
                site, event(visitor_id=visitor), event("signup", visitor_id=visitor, props={"plan": "pro"})
            )
            assert browser.send(body).status_code == 202
    rids = {}
    now = int(time.time() * 1000)
    for visitor in (GONE, KEPT):
        rids[visitor] = new_recording_id()
        answer = post_chunk(
            server, recording_site, rids[visitor], 0, chunk(page_events(now), visitor=visitor)
        )
        assert answer.status_code == 202, answer.text
    survey = create_survey(owner, site.id)
    publish(owner, survey["id"])
    seed_responses(
        db,
        site.id,
        survey["id"],
        1,
        [{"score": 9, "plan": "pro"}, {"score": 3, "plan": "free"}],
        visitors=[GONE, KEPT],
    )
    return site, rids


def test_erasing_a_visitor_removes_their_events_recordings_files_and_responses_and_nobody_elses(
    console_server: LiveServer, owner: httpx.Client, server_db: Database
) -> None:
    site, rids = _seed(console_server, owner, server_db)
    of_site = events.c.site_id == site.id
    assert _count(server_db, events, of_site, events.c.visitor_id == GONE) == 2
    assert stored_chunk_files(console_server.data_dir, rids[GONE])

    exported = owner.get(f"/api/sites/{site.id}/visitors/{GONE}/export")
    assert exported.status_code == 200
    assert exported.headers["content-disposition"].startswith("attachment")
    data = exported.json()
    assert [e["name"] for e in data["events"]] == ["pageview", "signup"]
    assert data["events"][1]["props"] == {"plan": "pro"}
    assert [r["id"] for r in data["recordings"]] == [rids[GONE]]
    assert [r["answers"] for r in data["survey_responses"]] == [{"score": 9, "plan": "pro"}]

    response = owner.delete(f"/api/sites/{site.id}/visitors/{GONE}")
    assert response.status_code == 202, response.text
    erasure = response.json()["erasure"]
    assert erasure["status"] == "done"
    assert (erasure["events_removed"], erasure["recordings_removed"], erasure["responses_removed"]) == (
        2,
        1,
        1,
    )
    assert GONE not in response.text

    assert _count(server_db, events, of_site, events.c.visitor_id == GONE) == 0
    assert _count(server_db, events, of_site, events.c.visitor_id == KEPT) == 2
    assert _count(server_db, recordings, recordings.c.visitor_id == GONE) == 0
    assert _count(server_db, recordings, recordings.c.visitor_id == KEPT) == 1
    assert _count(server_db, survey_responses, survey_responses.c.visitor_id == GONE) == 0
    assert _count(server_db, survey_responses, survey_responses.c.visitor_id == KEPT) == 1
    assert stored_chunk_files(console_server.data_dir, rids[GONE]) == []
    assert stored_chunk_files(console_server.data_dir, rids[KEPT])
    for path in (console_server.data_dir / "recordings").rglob("*"):
        assert not path.is_file() or GONE.encode() not in path.read_bytes()
    # The analytics store is asked to drop its copy; once it has, the task forgets the code too.
    task_id = erasure_id_task(server_db, erasure["id"])
    deadline = time.monotonic() + 60
    while True:
        with server_db.read() as conn:
            task = conn.execute(select(store_tasks).where(store_tasks.c.id == task_id)).one()
        assert (task.kind, task.site_id) == ("erase_visitor", site.id)
        assert task.visitor_id in (GONE, None)
        if task.done_at is not None or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert task.done_at is not None, "the store never applied the erasure"
    assert task.visitor_id is None

    listed = owner.get(f"/api/sites/{site.id}/erasures").json()["erasures"]
    assert listed[0]["id"] == erasure["id"]
    assert GONE not in orjson.dumps(listed).decode()
    after = owner.get(f"/api/sites/{site.id}/visitors/{GONE}/export").json()
    assert (after["events"], after["recordings"], after["survey_responses"]) == ([], [], [])


def erasure_id_task(db: Database, erasure_id: int) -> int:

    with db.read() as conn:
        return int(
            conn.execute(select(erasures.c.store_task_id).where(erasures.c.id == erasure_id)).scalar_one()
        )


def test_erasing_on_another_owners_or_an_unknown_site_is_404(owner: httpx.Client) -> None:
    assert owner.delete("/api/sites/999999/visitors/someone").status_code == 404
    assert owner.get("/api/sites/999999/visitors/someone/export").status_code == 404


def test_the_cli_erases_and_exports_a_visitor(
    console_server: LiveServer, owner: httpx.Client, server_db: Database
) -> None:
    site, _ = _seed(console_server, owner, server_db)
    base = [sys.executable, "-m", "sightline.cli"]
    where = ["--data-dir", str(console_server.data_dir), "--database-url", str(console_server.database_url)]
    exported = subprocess.run(
        [*base, "export-visitor", *where, "--site", str(site.id), "--visitor", GONE],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    assert len(orjson.loads(exported.stdout)["events"]) == 2
    erased = subprocess.run(
        [*base, "erase-visitor", *where, "--site", str(site.id), "--visitor", GONE],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "removed 2 events, 1 recordings, 1 survey responses" in erased.stdout
    assert _count(server_db, events, events.c.site_id == site.id, events.c.visitor_id == GONE) == 0
    unknown = subprocess.run(
        [*base, "erase-visitor", *where, "--site", "999999", "--visitor", GONE],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert unknown.returncode == 1
    assert "no site has the id 999999" in unknown.stderr
