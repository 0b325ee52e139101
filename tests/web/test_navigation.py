"""The main navigation marks the section of the page on screen, and only that one."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import Console, unique


def test_each_page_marks_its_own_section_as_current_in_the_navigation(console: Console) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Navigated shop", "domain": unique("nav") + ".example.org"}
    )
    assert isinstance(site, dict)
    sections = {
        "/sites": "Sites",
        f"/sites/{site['id']}": "Sites",
        f"/sites/{site['id']}/reports": "Reports",
        f"/sites/{site['id']}/reports?range=7d": "Reports",
        f"/sites/{site['id']}/no-such-page": "Sites",
        "/reports": "Reports",
        f"/recordings?site={site['id']}": "Recordings",
        f"/surveys?site={site['id']}": "Surveys",
        f"/surveys/new?site={site['id']}": "Surveys",
        "/health": "Health",
    }
    nav = page.get_by_role("navigation", name="Main")
    for path, label in sections.items():
        page.goto(path)
        expect(page.locator("main h1")).to_be_visible()
        current = nav.locator('[aria-current="page"]')
        expect(current).to_have_count(1)
        expect(current).to_have_text(label)
        expect(current).to_have_attribute("href", "/" + label.lower())


def test_following_a_link_from_a_site_to_its_reports_moves_the_current_section(console: Console) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Linked reports", "domain": unique("nav") + ".example.org"}
    )
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Sites")).to_have_attribute("aria-current", "page")
    page.get_by_role("main").get_by_role("link", name="Reports").first.click()
    expect(page).to_have_url(f"{console.url}/sites/{site['id']}/reports")
    expect(nav.get_by_role("link", name="Reports")).to_have_attribute("aria-current", "page")
    expect(nav.locator('[aria-current="page"]')).to_have_count(1)
    console.shoot(page, "nav-site-reports")
