"""A survey set to open by itself: the owner switches it on in the builder and publishes it; the
widget then opens on its targeted pages after the delay, with no code on the site, and not
elsewhere; the setting fits a phone in both themes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.axe import assert_accessible
from tests.support.browser import DESKTOP_CHROME, ensure_built
from tests.support.shop import Shop
from tests.web.conftest import PHONE, Console


@pytest.fixture
def shop() -> Iterator[Shop]:
    ensure_built()
    server = Shop()
    yield server
    server.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_survey_switched_to_open_by_itself_opens_on_its_pages_only(
    browser: Browser, console: Console, shop: Shop, scheme: str
) -> None:
    page = console.signed_in(scheme=scheme, viewport=PHONE)
    site = console.api(page, "POST", "/api/sites", {"name": "Auto shop", "domain": shop.domain})
    assert isinstance(site, dict)
    shop.use(console.server.base_url, site["key"])
    survey = console.api(
        page,
        "POST",
        "/api/feedback/surveys",
        {
            "site_id": site["id"],
            "name": "How is our pricing?",
            "questions": [{"type": "text", "title": "Tell us", "required": False}],
            "targeting": {"include": [{"match": "prefix", "path": "/pricing"}], "exclude": []},
        },
    )
    assert isinstance(survey, dict)
    assert survey["auto_open"] is None
    page.goto(f"/surveys/{survey['id']}")
    switch = page.get_by_role("switch", name="Open by itself on the targeted pages")
    switch.check()
    delay = page.get_by_label("Seconds after the page loads")
    expect(delay).to_have_value("5")
    delay.fill("1")
    install = page.get_by_role("region", name="Show it on your site")
    expect(install).to_contain_text("no line is needed")
    width, viewport = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    assert_accessible(page, f"survey builder, {scheme}, phone")
    console.shoot(page, f"survey-auto-open-{scheme}-phone")
    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.get_by_text("Published: visitors on the targeted pages")).to_be_visible()
    stored = console.api(page, "GET", f"/api/feedback/surveys/{survey['id']}")
    assert isinstance(stored, dict)
    assert (stored["status"], stored["auto_open"]) == ("published", {"delay_seconds": 1})

    visitor = browser.new_context(user_agent=DESKTOP_CHROME)
    try:
        tab = visitor.new_page()
        tab.goto(shop.url("/about"))
        tab.wait_for_function("window.analytics && window.analytics.status().feedback === 'ready'")
        tab.wait_for_timeout(2_500)
        expect(tab.get_by_role("dialog")).to_have_count(0)
        tab.goto(shop.url("/pricing/teams"))
        # /i/config answers within the cache's 10 s with the survey published a moment ago.
        expect(tab.get_by_role("dialog", name="How is our pricing?")).to_be_visible(timeout=20_000)
    finally:
        visitor.close()
