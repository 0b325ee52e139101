"""A visitor's erasure and export through the API for every code the rules allow ('/' in it, sent
as '/' or '%2F'; 200 characters), 422 for one they do not (201 characters), and exports streamed:
parallel exports of a visitor with 100,000 events leave the server's memory nearly where it was."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
import orjson
import pytest

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.reports.helpers import Event, insert_events, pageview
from tests.support.server import LiveServer, create_owner


def _site(owner: httpx.Client) -> int:
    made = owner.post("/api/sites", json={"name": "Rights", "domain": f"{uuid.uuid4().hex[:10]}.example.com"})
    assert made.status_code == 201, made.text
    return int(made.json()["id"])


def _store(server: LiveServer, rows: list[Event]) -> None:
    url = server.database_url or f"sqlite:///{server.data_dir / 'sightline.db'}"
    database = open_database(url, migrate=False)
    try:
        for start in range(0, len(rows), 20_000):
            insert_events(database, rows[start : start + 20_000])
    finally:
        database.dispose()


CODES = ["team/alice", "/leading", "a//b/export", "trailing/", "a%2Fb literally", "x" * 200]


@pytest.mark.parametrize(
    "code", CODES, ids=["slash", "leading", "ends-in-export", "trailing", "percent", "200"]
)
def test_a_visitor_code_the_rules_allow_is_exported_and_erased_through_the_api(
    console_server: LiveServer, owner: httpx.Client, code: str
) -> None:
    site_id = _site(owner)
    now = datetime.now(UTC) - timedelta(minutes=5)
    visits = [
        replace(pageview(site_id, now, code, "/a"), session_id="s1"),
        pageview(site_id, now, "other", "/b"),
    ]
    _store(console_server, visits)
    encoded = quote(code, safe="")  # as the console sends it (encodeURIComponent)
    exported = owner.get(f"/api/sites/{site_id}/visitors/{encoded}/export")
    assert exported.status_code == 200, exported.text
    assert exported.json()["visitor_id"] == code
    assert [e["path"] for e in exported.json()["events"]] == ["/a"]
    erased = owner.delete(f"/api/sites/{site_id}/visitors/{encoded}")
    assert erased.status_code == 202, erased.text
    assert erased.json()["erasure"]["events_removed"] == 1
    assert owner.get(f"/api/sites/{site_id}/visitors/{encoded}/export").json()["events"] == []


def test_a_code_with_a_slash_also_reaches_its_visitor_unencoded(owner: httpx.Client) -> None:
    site_id = _site(owner)
    exported = owner.get(f"/api/sites/{site_id}/visitors/team/alice/export")
    assert exported.status_code == 200, exported.text
    assert exported.json()["visitor_id"] == "team/alice"


def test_a_code_of_201_characters_is_422_as_documented(owner: httpx.Client) -> None:
    site_id = _site(owner)
    for response in (
        owner.get(f"/api/sites/{site_id}/visitors/{'x' * 201}/export"),
        owner.delete(f"/api/sites/{site_id}/visitors/{'x' * 201}"),
    ):
        assert response.status_code == 422, response.text
        assert response.json()["error"]["field"] == "visitor_id"


def _rss_mib(server: LiveServer) -> float:
    assert server.process is not None
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_four_parallel_exports_of_100000_events_leave_the_servers_memory_nearly_unchanged(
    start_server: StartServer,
) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    site_id = _site(owner)
    start = datetime.now(UTC) - timedelta(days=2)
    rows = [
        Event(
            site_id,
            start + timedelta(seconds=n),
            "heavy",
            f"s{n // 50}",
            "signup",
            f"/page/{n % 977}",
            "example.org",
            None,
            None,
            None,
            "Chrome",
            "Linux",
            "desktop",
            {"plan": "pro", "n": str(n)},
        )
        for n in range(100_000)
    ]
    _store(server, rows)
    del rows
    assert owner.get(f"/api/sites/{site_id}/visitors/nobody/export").status_code == 200  # warmed up
    before = _rss_mib(server)
    peak = [before]
    sizes: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mib(server))
            time.sleep(0.02)

    def export() -> None:
        with server.client(cookies=owner.cookies) as client:
            body = client.get(f"/api/sites/{site_id}/visitors/heavy/export", timeout=120)
            assert body.status_code == 200
            found = orjson.loads(body.content)
            assert found["events_total"] == 100_000
            assert len(found["events"]) == 100_000
            sizes.append(len(body.content))

    watcher = threading.Thread(target=watch)
    watcher.start()
    exports = [threading.Thread(target=export) for _ in range(4)]
    for thread in exports:
        thread.start()
    for thread in exports:
        thread.join()
    done.set()
    watcher.join()
    owner.close()
    grown = peak[0] - before
    print(
        f"4 exports of {sizes[0] / 2**20:.1f} MiB each: the server grew {grown:.0f} MiB (from {before:.0f})"
    )
    assert len(sizes) == 4
    assert grown < 60, f"the server grew {grown:.0f} MiB"
