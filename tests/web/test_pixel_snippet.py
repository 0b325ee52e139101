"""The snippet's no-JavaScript line in real Chromium: the owner asks for it on the site page, and a
visitor whose browser runs no JavaScript is counted through the image it shows."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect
from sqlalchemy import select

from sightline.database import open_database
from sightline.database.schema import events
from tests.ingest.helpers import CHROME, wait_until
from tests.support.server import LiveServer
from tests.web.conftest import Console, CustomerSite


def test_a_visitor_without_javascript_is_counted_by_the_snippets_noscript_image(
    console: Console, console_server: LiveServer, customer_site: Callable[[], CustomerSite]
) -> None:
    shop = customer_site()
    tab = console.signed_in()
    site = console.api(tab, "POST", "/api/sites", {"name": "Plain shop", "domain": shop.domain})
    assert isinstance(site, dict)
    tab.goto(f"/sites/{site['id']}")
    snippet = tab.locator("pre.snippet code")
    expect(snippet).to_have_text(site["snippet"])
    tab.get_by_label("Also count visitors without JavaScript").check()
    expect(snippet).to_contain_text("<noscript><img src=")
    tab.get_by_label("Wait for consent").check()
    expect(tab.get_by_label("Also count visitors without JavaScript")).to_be_disabled()
    expect(snippet).not_to_contain_text("noscript")  # an image cannot wait for consent
    tab.get_by_label("Wait for consent").uncheck()
    text = snippet.inner_text()
    assert text.startswith(site["snippet"])
    script, noscript = text.split("\n")
    shop.home = (
        f"<!doctype html><html><head>{script}</head><body><p>Shop</p>{noscript}</body></html>".encode()
    )

    plain = console.browser.new_context(java_script_enabled=False, user_agent=CHROME)
    try:
        page = plain.new_page()
        page.goto(f"http://{shop.domain}/?from=mail")
        expect(page.get_by_text("Shop")).to_be_visible()
    finally:
        plain.close()
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    try:

        def counted() -> list[tuple[str, str]]:
            with db.read() as conn:
                query = select(events.c.name, events.c.path).where(events.c.site_id == site["id"])
                return [(str(row.name), str(row.path)) for row in conn.execute(query)]

        wait_until(lambda: counted() == [("pageview", "/")], timeout=20)
    finally:
        db.dispose()
