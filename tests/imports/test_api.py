"""Imports through the API of a real server, on both store engines: an exported site imported into
another gives the same figures; Plausible's export (a zip built here) shows beside collected
figures, marked as imported; the same file twice counts once; bad files are 422 naming the place."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, signed_in
from tests.imports.helpers import csv_text, imported, plausible_zip, upload, wait_finished
from tests.reports.helpers import Event, insert_events, pageview, wait_caught_up
from tests.support.server import LiveServer, create_owner

ENGINES = [("sqlite", "duckdb"), ("postgresql", "clickhouse")]
TODAY = datetime.now(UTC).date()
D1 = TODAY - timedelta(days=20)
D2 = D1 + timedelta(days=1)
WEEK = {"range": "custom", "from": D1.isoformat(), "to": (D1 + timedelta(days=6)).isoformat()}


@pytest.fixture(scope="module", params=ENGINES, ids=["-".join(pair) for pair in ENGINES])
def console_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A server per log database and store engine (ClickHouse's SQL through embedded chDB)."""
    backend, engine = request.param
    directory = tmp_path_factory.mktemp(f"imports-{backend}-{engine}")
    env = {}
    if engine == "clickhouse":
        env["SIGHTLINE_EVENTS_URL"] = f"chdb://{directory / 'clickhouse'}"
    server = LiveServer(directory / "data", database_url_for(request, backend, directory), env=env)
    server.start()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    yield server
    server.stop()


@pytest.fixture
def owner(console_server: LiveServer) -> Iterator[httpx.Client]:
    client = signed_in(console_server)
    yield client
    client.close()


def new_site(owner: httpx.Client, name: str) -> int:
    created = owner.post("/api/sites", json={"name": name, "domain": f"{uuid.uuid4().hex[:10]}.example.com"})
    assert created.status_code == 201, created.text
    return int(created.json()["id"])


def store(server: LiveServer, owner: httpx.Client, rows: list[Event]) -> None:
    assert server.database_url is not None
    database = open_database(server.database_url, migrate=False)
    try:
        insert_events(database, rows)
    finally:
        database.dispose()
    wait_caught_up(owner)


def report(owner: httpx.Client, site_id: int, kind: str, **params: Any) -> dict[str, Any]:
    response = owner.get(f"/api/sites/{site_id}/reports/{kind}", params={**WEEK, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def rows_of(owner: httpx.Client, site_id: int, dimension: str, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = report(owner, site_id, "breakdown", dimension=dimension, **params)["rows"]
    return rows


def test_a_sites_exported_figures_imported_into_another_site_give_the_same_figures(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    source, target = new_site(owner, "Exported"), new_site(owner, "Imported")
    rows = []
    for day in range(7):  # day k: k + 1 visitors, every other one staying 30 s for a second page
        noon = datetime.combine(D1 + timedelta(days=day), datetime.min.time(), UTC) + timedelta(hours=12)
        for n in range(day + 1):
            visitor = f"rt-{source}-{day}-{n}"
            rows.append(pageview(source, noon + timedelta(minutes=n), visitor, "/"))
            if n % 2 == 0:
                rows.append(pageview(source, noon + timedelta(minutes=n, seconds=30), visitor, "/pricing"))
    store(console_server, owner, rows)
    exported = owner.get(f"/api/sites/{source}/reports/export/timeseries.csv", params=WEEK)
    assert exported.status_code == 200
    done = imported(owner, target, f"site-{source}-timeseries.csv", exported.content)
    assert done["kind"] == "daily"
    assert done["from"] == WEEK["from"]
    assert done["to"] == WEEK["to"]
    assert done["progress"] == 1.0
    assert done["rows"] == 7

    original, copy = report(owner, source, "timeseries"), report(owner, target, "timeseries")
    assert copy["points"] == original["points"]
    assert copy["imported"] == {"included": True, "reason": None}
    assert original["imported"]["included"] is False
    first, second = report(owner, source, "summary")["current"], report(owner, target, "summary")["current"]
    assert first["visits"] == 28
    assert first["visitors"] == 28
    assert second == first
    nothing = report(owner, target, "summary", imported="false")
    assert nothing["current"]["visits"] == 0
    assert nothing["imported"] == {"included": False, "reason": "turned_off"}
    # The week after: only its comparison period holds imported figures, so the week does not.
    after = {"from": (D1 + timedelta(days=7)).isoformat(), "to": (D1 + timedelta(days=13)).isoformat()}
    for kind in ("summary", "timeseries"):
        later = report(owner, target, kind, compare="true", **after)
        assert later["imported"] == {"included": False, "reason": "none"}, kind
    assert report(owner, target, "summary", compare="true", **after)["previous"]["visits"] == 28


def plausible_files(first: date, second: date) -> dict[str, str]:
    a, b = first.strftime("%Y%m%d"), second.strftime("%Y%m%d")
    suffix = f"_{a}_{b}.csv"
    d1, d2 = first.isoformat(), second.isoformat()
    return {
        "imported_visitors" + suffix: csv_text(
            ["date", "visitors", "pageviews", "bounces", "visits", "visit_duration"],
            [[d1, 10, 30, 4, 12, 1200], [d2, 5, 9, 1, 6, 300]],
        ),
        "imported_sources" + suffix: csv_text(
            [
                "date",
                "source",
                "referrer",
                "utm_source",
                "utm_medium",
                "utm_campaign",
                "utm_content",
                "utm_term",
                "pageviews",
                "visitors",
                "visits",
                "visit_duration",
                "bounces",
            ],
            [
                [d1, "", "", "", "", "", "", "", 10, 6, 7, 600, 2],
                [d1, "duckduckgo.com", "", "ddg", "", "", "", "", 20, 4, 5, 600, 2],
                [d2, "duckduckgo.com", "", "", "", "", "", "", 9, 5, 6, 300, 1],
            ],
        ),
        "imported_pages" + suffix: csv_text(
            [
                "date",
                "hostname",
                "page",
                "visits",
                "visitors",
                "pageviews",
                "scroll_depth",
                "pageleave_visitors",
            ],
            [
                [d1, "x.com", "/pricing", 9, 8, 20, "", 0],
                [d1, "x.com", "/", 6, 5, 10, "", 0],
                [d2, "x.com", "/pricing", 6, 5, 9, "", 0],
            ],
        ),
        "imported_entry_pages" + suffix: csv_text(
            ["date", "entry_page", "visitors", "entrances", "visit_duration", "bounces", "pageviews"],
            [[d1, "/", 10, 12, 1200, 4, 30]],
        ),
        "imported_exit_pages" + suffix: csv_text(
            ["date", "exit_page", "visitors", "visit_duration", "exits", "bounces", "pageviews"],
            [[d1, "/pricing", 10, 1200, 12, 4, 30]],
        ),
        "imported_locations" + suffix: csv_text(
            [
                "date",
                "country",
                "region",
                "city",
                "visitors",
                "visits",
                "visit_duration",
                "bounces",
                "pageviews",
            ],
            [[d1, "DE", "DE-BE", 2950159, 10, 12, 1200, 4, 30]],
        ),
        "imported_devices" + suffix: csv_text(
            ["date", "device", "visitors", "visits", "visit_duration", "bounces", "pageviews"],
            [[d1, "Desktop", 10, 12, 1200, 4, 30]],
        ),
        "imported_browsers" + suffix: csv_text(
            [
                "date",
                "browser",
                "browser_version",
                "visitors",
                "visits",
                "visit_duration",
                "bounces",
                "pageviews",
            ],
            [[d1, "Firefox", "120", 10, 12, 1200, 4, 30]],
        ),
        "imported_operating_systems" + suffix: csv_text(
            [
                "date",
                "operating_system",
                "operating_system_version",
                "visitors",
                "visits",
                "visit_duration",
                "bounces",
                "pageviews",
            ],
            [[d1, "Linux", "", 10, 12, 1200, 4, 30]],
        ),
        "imported_custom_events" + suffix: csv_text(
            ["date", "name", "link_url", "path", "visitors", "events"], [[d1, "Signup", "", "", 3, 4]]
        ),
    }


@pytest.fixture
def plausible_site(console_server: LiveServer, owner: httpx.Client) -> tuple[int, dict[str, Any]]:
    """A site with two collected visits on D1 and Plausible's export of D1 and D2 imported."""
    site_id = new_site(owner, "Plausible")
    noon = datetime.combine(D1, datetime.min.time(), UTC) + timedelta(hours=12)
    store(
        console_server,
        owner,
        [
            pageview(site_id, noon, f"c1-{site_id}", "/pricing"),
            pageview(site_id, noon + timedelta(hours=1), f"c2-{site_id}", "/"),
            pageview(site_id, noon + timedelta(hours=1, minutes=1), f"c2-{site_id}", "/pricing"),
        ],
    )
    done = imported(owner, site_id, "plausible-export.zip", plausible_zip(plausible_files(D1, D2)))
    return site_id, done


def test_plausibles_export_shows_beside_the_collected_figures_marked_as_imported(
    owner: httpx.Client, plausible_site: tuple[int, dict[str, Any]]
) -> None:
    site_id, done = plausible_site
    assert done["kind"] == "plausible"
    assert len(done["tables"]) == 10
    summary = report(owner, site_id, "summary")
    assert summary["imported"] == {"included": True, "reason": None}
    assert summary["current"] == {
        "visitors": 2 + 15,
        "visits": 2 + 18,
        "pageviews": 3 + 39,
        "views_per_visit": 2.1,
        "bounce_rate": 0.3,  # (1 + 5) / 20
        "visit_duration": 78,  # (60 + 1500) / 20
    }
    points = {p["time"]: p for p in report(owner, site_id, "timeseries")["points"]}
    assert (points[D1.isoformat()]["visitors"], points[D1.isoformat()]["visits"]) == (12, 14)
    assert (points[D2.isoformat()]["visits"], points[D2.isoformat()]["pageviews"]) == (6, 9)
    pages = rows_of(owner, site_id, "pages")
    assert pages == [
        {"value": "/pricing", "visitors": 2 + 13, "pageviews": 2 + 29},
        {"value": "/", "visitors": 1 + 5, "pageviews": 1 + 10},
    ]
    assert rows_of(owner, site_id, "pages", limit=1, offset=1) == [pages[1]]
    assert [r["value"] for r in rows_of(owner, site_id, "pages", search="PRI")] == ["/pricing"]
    sources = rows_of(owner, site_id, "sources")
    assert [(r["value"], r["visits"]) for r in sources] == [("DuckDuckGo", 11), ("(none)", 2 + 7)]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "utm_sources")] == [("ddg", 5)]
    channels = [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "channels")]
    assert channels == [("organic_search", 11), ("direct", 2 + 7)]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "countries")] == [
        ("DE", 12),
        ("(none)", 2),
    ]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "regions")] == [("DE-BE", 12)]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "devices")] == [("desktop", 14)]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "browsers")] == [
        ("Firefox", 12),
        ("Chrome", 2),
    ]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "operating_systems")] == [
        ("Linux", 14)
    ]
    assert rows_of(owner, site_id, "events") == [{"value": "Signup", "visitors": 3, "events": 4}]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "entry_pages")] == [
        ("/", 13),
        ("/pricing", 1),
    ]
    assert [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "exit_pages")] == [("/pricing", 14)]
    filtered = report(owner, site_id, "summary", source="duckduckgo.com")
    assert filtered["imported"] == {"included": False, "reason": "filters"}
    assert filtered["current"]["visits"] == 0
    hourly = owner.get(
        f"/api/sites/{site_id}/reports/timeseries", params={"range": "custom", "from": str(D1), "to": str(D1)}
    ).json()
    assert hourly["interval"] == "hour"
    assert hourly["imported"]["reason"] == "hourly"
    assert sum(p["visits"] for p in hourly["points"]) == 2
    cities = report(owner, site_id, "breakdown", dimension="cities")
    assert cities["imported"] == {"included": False, "reason": "dimension"}
    left_out = report(owner, site_id, "breakdown", dimension="pages", imported="false")
    assert [(r["value"], r["pageviews"]) for r in left_out["rows"]] == [("/pricing", 2), ("/", 1)]
    exported = owner.get(f"/api/sites/{site_id}/reports/export/summary.csv", params=WEEK)
    assert "visits,20\r\n" in exported.text


def test_imported_sources_are_named_as_live_ones_so_one_source_is_one_row(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site_id = new_site(owner, "Named sources")
    noon = datetime.combine(D1, datetime.min.time(), UTC) + timedelta(hours=12)
    live = [  # as ingest names them: Google for any of its hosts, a host without www. otherwise
        pageview(site_id, noon, f"g1-{site_id}", "/", "Google"),
        pageview(site_id, noon + timedelta(minutes=1), f"g2-{site_id}", "/", "Google"),
        pageview(site_id, noon + timedelta(minutes=2), f"b1-{site_id}", "/", "blog.example.org"),
    ]
    store(console_server, owner, live)
    files = plausible_files(D1, D2)
    header = files[next(name for name in files if name.startswith("imported_sources"))].splitlines()[0]
    d1, d2 = D1.isoformat(), D2.isoformat()
    files = {name: text for name, text in files.items() if not name.startswith("imported_sources")}
    files[f"imported_sources_{D1:%Y%m%d}_{D2:%Y%m%d}.csv"] = csv_text(
        header.split(","),
        [
            [d1, "google.com", "", "", "", "", "", "", 10, 6, 7, 600, 2],
            [d2, "www.google.de", "", "", "", "", "", "", 4, 3, 3, 100, 1],
            [d2, "Google", "", "", "", "", "", "", 2, 1, 1, 10, 0],
            [d1, "www.blog.example.org", "", "", "", "", "", "", 3, 2, 2, 60, 1],
            [d1, "t.co", "", "", "", "", "", "", 5, 4, 4, 60, 1],
        ],
    )
    imported(owner, site_id, "plausible-export.zip", plausible_zip(files))
    sources = [(r["value"], r["visits"]) for r in rows_of(owner, site_id, "sources")]
    assert sources == [("Google", 2 + 7 + 3 + 1), ("Twitter", 4), ("blog.example.org", 1 + 2)]
    assert [r["value"] for r in rows_of(owner, site_id, "sources", search="goo")] == ["Google"]
    assert rows_of(owner, site_id, "sources", limit=1, offset=1) == [
        next(r for r in rows_of(owner, site_id, "sources") if r["value"] == "Twitter")
    ]


def test_the_same_file_twice_counts_once_and_an_overlapping_file_is_refused(
    owner: httpx.Client, plausible_site: tuple[int, dict[str, Any]]
) -> None:
    site_id, done = plausible_site
    before = report(owner, site_id, "summary")["current"]
    again = upload(owner, site_id, "the-same-file-renamed.zip", plausible_zip(plausible_files(D1, D2)))
    assert again.status_code == 200, again.text
    assert again.json()["id"] == done["id"]
    assert again.json()["duplicate"] is True
    assert report(owner, site_id, "summary")["current"] == before
    other = plausible_files(D2, D2 + timedelta(days=1))
    overlapping = upload(owner, site_id, "later.zip", plausible_zip(other))
    assert overlapping.status_code == 409
    assert overlapping.json()["error"]["code"] == "import_overlaps"
    assert f"Import {done['id']}" in overlapping.json()["error"]["message"]
    listed = owner.get(f"/api/sites/{site_id}/imports").json()["imports"]
    assert [i["id"] for i in listed] == [done["id"]]
    assert owner.delete(f"/api/imports/{done['id']}").status_code == 204
    assert owner.get(f"/api/imports/{done['id']}").status_code == 404
    gone = report(owner, site_id, "summary")
    assert gone["current"]["visits"] == 2
    assert gone["imported"]["reason"] == "none"
    assert upload(owner, site_id, "later.zip", plausible_zip(other)).status_code == 202


BAD_DAILY = [
    (
        "a number",
        "date,visitors,visits,pageviews\n2024-01-01,1,2,3\n2024-01-02,4,5x,6\n",
        "days.csv:3:visits",
    ),
    ("a date", "date,visitors,visits,pageviews\n2024-01-32,1,2,3\n", "days.csv:2:date"),
    (
        "a day twice",
        "date,visitors,visits,pageviews\n2024-01-01,1,2,3\n2024-01-01,1,2,3\n",
        "days.csv:3:date",
    ),
    ("a column", "date,visitors,pageviews\n2024-01-01,1,3\n", "days.csv:1"),
    ("a row's width", "date,visitors,visits,pageviews\n2024-01-01,1,2\n", "days.csv:2"),
    (
        "more bounces than visits",
        "date,visitors,visits,pageviews,bounces\n2024-01-01,1,2,3,5\n",
        "days.csv:2:bounces",
    ),
]


@pytest.mark.parametrize(("case", "text", "field"), BAD_DAILY, ids=[c[0] for c in BAD_DAILY])
def test_a_bad_daily_csv_is_422_naming_its_file_line_and_column(
    owner: httpx.Client, case: str, text: str, field: str
) -> None:
    site_id = new_site(owner, f"Bad {case}")
    response = upload(owner, site_id, "days.csv", text.encode())
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_import"
    assert error["field"] == field
    line = field.split(":")[1]
    assert f"days.csv line {line}" in error["message"] or "lacks the column" in error["message"]
    assert owner.get(f"/api/sites/{site_id}/imports").json()["imports"] == []


def test_a_bad_plausible_zip_is_422_naming_the_member_and_the_place(owner: httpx.Client) -> None:
    site_id = new_site(owner, "Bad zip")
    files = plausible_files(D1, D2)
    name = next(n for n in files if n.startswith("imported_pages"))
    files[name] = files[name].replace(",5,10,", ",5,ten,")
    response = upload(owner, site_id, "export.zip", plausible_zip(files))
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["field"] == f"{name}:3:pageviews"
    assert f"{name} line 3, column pageviews: 'ten' is not a whole number" in error["message"]
    stranger = plausible_zip({**plausible_files(D1, D2), "notes.csv": "a,b\n1,2\n"})
    assert upload(owner, site_id, "export.zip", stranger).json()["error"]["field"] == "notes.csv"
    without = {n: t for n, t in plausible_files(D1, D2).items() if not n.startswith("imported_visitors")}
    assert "no imported_visitors" in upload(owner, site_id, "export.zip", plausible_zip(without)).text
    latin = b"date,visitors,visits,pageviews\n2024-01-01,1,2,3\n" + "2024-01-02,1,2,3 \xe9\n".encode(
        "latin-1"
    )
    assert "not UTF-8" in upload(owner, site_id, "days.csv", latin).json()["error"]["message"]
    assert upload(owner, site_id, "days.csv", b"").json()["error"]["code"] == "invalid_import"
    assert upload(owner, site_id, "not-a-zip.zip", b"PK\x03\x04 broken").status_code == 422
    wrong_type = upload(owner, site_id, "days.csv", b"{}", "application/json")
    assert wrong_type.status_code == 415
    assert wrong_type.json()["error"]["code"] == "unsupported_media_type"
    assert owner.get(f"/api/sites/{site_id}/imports").json()["imports"] == []


def test_an_import_answers_with_its_status_until_done(owner: httpx.Client) -> None:
    site_id = new_site(owner, "Progress")
    days = [TODAY - timedelta(days=n) for n in range(3000, 30, -1)]
    text = csv_text(["date", "visitors", "visits", "pageviews"], [[d.isoformat(), 1, 1, 2] for d in days])
    response = upload(owner, site_id, "long.csv", text.encode())
    assert response.status_code == 202
    accepted = response.json()
    assert accepted["status"] in ("queued", "running", "done")
    assert accepted["size_bytes"] == len(text.encode())
    done = wait_finished(owner, int(accepted["id"]))
    assert (done["status"], done["progress"], done["rows"]) == ("done", 1.0, len(days))
    assert done["error"] is None
    assert done["finished_at"] is not None
