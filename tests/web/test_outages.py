"""What the console says when its data is out of reach: the analytics store failing (a banner on
the dashboard, the cause and the fix on Health) and the database stopped (Health: database down)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from http.server import BaseHTTPRequestHandler

from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer
from tests.support.origins import loopback_server
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner
from tests.web.conftest import Console

SIZES: dict[str, ViewportSize] = {
    "desktop": {"width": 1280, "height": 800},
    "phone": {"width": 390, "height": 844},
}


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    server = loopback_server(BaseHTTPRequestHandler)
    port = int(server.server_address[1])
    server.server_close()
    return port


@contextmanager
def console_of(browser: Browser, server: LiveServer) -> Iterator[Console]:
    """Browser tabs on a server of the test's own, failing on page errors like ``console``."""
    helper = Console(browser, server)
    try:
        yield helper
    finally:
        helper.close()
    assert helper.errors == [], f"page errors: {helper.errors}"


def test_a_failing_analytics_store_is_named_on_the_dashboard_and_on_health(
    browser: Browser, start_server: StartServer
) -> None:
    server = start_server(
        env={"SIGHTLINE_EVENTS_URL": f"clickhouse://user:secret@127.0.0.1:{_closed_port()}/db"}
    )
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    with console_of(browser, server) as console:
        page = console.signed_in()
        site = console.api(page, "POST", "/api/sites", {"name": "Stale shop", "domain": "stale.example.com"})
        assert isinstance(site, dict)
        _stale_dashboard(console, page, int(site["id"]))


def test_an_unreachable_recordings_bucket_is_named_on_health_with_what_to_do(
    browser: Browser, start_server: StartServer
) -> None:
    bucket = f"s3://recordings/prod?endpoint=http://127.0.0.1:{_closed_port()}"
    server = start_server(
        env={
            "SIGHTLINE_RECORDINGS_URL": bucket,
            "AWS_ACCESS_KEY_ID": "key-of-test",
            "AWS_SECRET_ACCESS_KEY": "secret-of-test",
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    )
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    with console_of(browser, server) as console:
        page = console.signed_in(viewport=SIZES["phone"])
        page.goto("/health")
        problems = page.get_by_role("region", name="Overall").locator(".problems")
        expect(problems).to_contain_text("Recordings: down.", timeout=30_000)
        expect(problems).to_contain_text("could not be reached")
        expect(problems).to_contain_text("What to do: Check that the object store runs")
        service = page.get_by_role("region", name="Recordings", exact=True)
        expect(service).to_contain_text("s3://recordings/prod/")
        console.shoot(page, "health-recordings-down")


def _stale_dashboard(console: Console, page: Page, site_id: int) -> None:
    page.goto(f"/sites/{site_id}/reports")
    banner = page.locator(".stale")
    expect(banner).to_contain_text("The reports cannot be updated right now", timeout=30_000)
    # Right after the start the banner may say the store is starting; it asks health again every 30 s.
    expect(banner).to_contain_text(
        "What to do: Check that the ClickHouse server in --events-url is running", timeout=45_000
    )
    console.shoot(page, "reports-store-down")
    banner.get_by_role("link", name="Open Health").click()
    overall = page.get_by_role("region", name="Overall")
    expect(overall.locator(".problems")).to_contain_text("Analytics store: down.")
    expect(overall.locator(".problems")).to_contain_text("What to do: Check that the ClickHouse server")
    console.shoot(page, "health-store-down")


def test_with_the_database_stopped_health_says_database_down_and_what_to_do(
    browser: Browser, start_server: StartServer
) -> None:
    """Health reloaded in both themes on a desktop and a phone, with one PostgreSQL server stopped
    (a cluster and a server per theme before: 8 s of CPU each)."""
    pg = PostgresServer()
    pg.start()
    try:
        server = start_server(database_url=pg.create_database())
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        with console_of(browser, server) as console:
            _database_stops(console, pg)
    finally:
        pg.stop()


def _database_stops(console: Console, pg: PostgresServer) -> None:
    page = console.signed_in(viewport=SIZES["desktop"])
    page.goto("/health")
    expect(page.get_by_role("region", name="Database").locator(".badge")).to_have_text("OK")
    pg.stop()
    for scheme in ("light", "dark"):
        for size in SIZES:
            page.emulate_media(color_scheme=scheme)
            page.set_viewport_size(SIZES[size])
            page.reload()
            expect(page.get_by_text(re.compile(r"^Database: down"))).to_be_visible(timeout=30_000)
            expect(page.locator("main")).to_contain_text("What to do")
            expect(page.locator("main")).not_to_contain_text("Something went wrong")
            console.shoot(page, f"health-database-down-{scheme}-{size}")
    page.goto("/sites")
    expect(page.get_by_role("alert")).to_contain_text("The Health page says what is wrong")


def test_health_says_when_an_older_sqlite_file_keeps_much_free_space_and_how_to_give_it_back(
    browser: Browser, start_server: StartServer
) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    server.stop()
    # As a database made before Sightline gave space back: no auto-vacuum, 80 MiB of free pages.
    with closing(sqlite3.connect(server.data_dir / "sightline.db")) as conn:
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
        conn.execute("CREATE TABLE filler (b BLOB)")
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 80) "
            "INSERT INTO filler SELECT zeroblob(1048576) FROM n"
        )
        conn.commit()
        conn.execute("DROP TABLE filler")
        conn.commit()
    server.start()
    with console_of(browser, server) as console:
        page = console.signed_in(viewport=SIZES["phone"])
        page.goto("/health")
        database = page.get_by_role("region", name="Database")
        expect(database.locator(".badge")).to_have_text("OK")
        expect(database.locator(".service-advice")).to_contain_text(
            re.compile(r"\d+ MiB of the SQLite database \(\d+% of its file\) are free pages")
        )
        expect(database.locator(".service-advice")).to_contain_text("run `sightline compact` once")
        expect(database.locator("div").filter(has_text=re.compile(r"^Auto-vacuum"))).to_contain_text("none")
        # Figures that are paths keep their underscores (state words such as catching_up read as words).
        disk = page.get_by_role("region", name="Disk")
        assert "_" in str(server.data_dir)
        expect(disk.locator("div").filter(has_text=re.compile(r"^Path"))).to_contain_text(
            str(server.data_dir)
        )
        console.shoot(page, "health-database-free-pages")
