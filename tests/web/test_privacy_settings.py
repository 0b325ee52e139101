"""The privacy and visitor sections of a site's settings page: cookieless, exclusions, retention,
the owner's exclusion link, and erasing a visitor through the console."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.web.conftest import Console, unique

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)


def test_privacy_settings_are_changed_on_the_settings_page_with_errors_on_their_field(
    console: Console,
) -> None:
    page = console.signed_in()
    domain = unique("private") + ".example.com"
    site = console.api(page, "POST", "/api/sites", {"name": "Private shop", "domain": domain})
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}/settings")
    toc = page.get_by_role("navigation", name="Settings sections")
    expect(toc.get_by_role("link", name="Privacy and retention")).to_be_visible()
    expect(toc.get_by_role("link", name="A visitor's data")).to_be_visible()

    page.get_by_role("switch", name="Count without cookies or storage").click()
    expect(page.get_by_role("status").filter(has_text="Cookieless counting is on.")).to_be_visible()

    addresses = page.get_by_label("Excluded addresses")
    addresses.fill("203.0.113.7\nnot-an-address")
    page.get_by_role("button", name="Save addresses").click()
    expect(page.get_by_text("Line 2: 'not-an-address' is not an address")).to_be_visible()
    addresses.fill("203.0.113.7\n10.1.2.3/8")
    page.get_by_role("button", name="Save addresses").click()
    expect(page.get_by_role("status").filter(has_text="Excluded addresses saved.")).to_be_visible()
    expect(addresses).to_have_value("203.0.113.7\n10.0.0.0/8")

    page.get_by_label("Keep events and survey responses (days)").fill("90")
    page.get_by_role("button", name="Save retention").click()
    expect(page.get_by_role("status").filter(has_text="kept 90 days")).to_be_visible()
    expect(page.get_by_text(f"https://{domain}/?sightline=exclude")).to_be_visible()

    sites = console.api(page, "GET", "/api/sites")
    assert isinstance(sites, dict)
    stored = next(s for s in sites["sites"] if s["id"] == site["id"])
    assert (stored["cookieless"], stored["excluded_addresses"], stored["retention_days"]) == (
        True,
        ["203.0.113.7", "10.0.0.0/8"],
        90,
    )
    console.shoot(page, "settings-privacy")


def test_a_visitor_is_erased_from_the_console_and_the_erasure_listed_without_the_code(
    console: Console,
) -> None:
    page = console.signed_in()
    domain = f"localhost:{20000 + int(unique('p')[-4:], 16) % 9000}"
    site = console.api(page, "POST", "/api/sites", {"name": "Erase shop", "domain": domain})
    assert isinstance(site, dict)
    body = {
        "key": site["key"],
        "batch_id": unique("batch") + "0123456789",
        "events": [{"name": "pageview", "visitor_id": "visitor-erase-me", "session_id": "s1", "path": "/"}],
    }
    headers = {"Origin": f"http://{domain}", "User-Agent": CHROME, "Content-Type": "text/plain"}
    sent = httpx.post(f"{console.url}/i/events", json=body, headers=headers, timeout=30)
    assert sent.status_code == 202, sent.text
    page.goto(f"/sites/{site['id']}/settings#visitors")
    expect(page.get_by_text("No visitor of this site has been erased.")).to_be_visible()
    page.get_by_label("Visitor code").fill("visitor-erase-me")
    page.get_by_role("button", name="Erase…").click()
    dialog = page.get_by_role("dialog", name="Erase this visitor?")
    dialog.get_by_role("button", name="Erase for good").click()
    expect(page.get_by_role("status").filter(has_text="Erased: 1 events, 0 recordings")).to_be_visible()
    row = page.locator(".privacy-table tbody tr")
    expect(row).to_have_count(1)
    expect(row).not_to_contain_text("visitor-erase-me")
    exported = console.api(page, "GET", f"/api/sites/{site['id']}/visitors/visitor-erase-me/export")
    assert isinstance(exported, dict)
    assert exported["events"] == []


def test_the_owner_blocks_referrer_hosts_on_the_settings_page_with_a_bad_line_named(console: Console) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Spam-free", "domain": unique("spam") + ".example.com"}
    )
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}/settings#referrers")
    toc = page.get_by_role("navigation", name="Settings sections")
    expect(toc.get_by_role("link", name="Referrer spam")).to_be_visible()
    hosts = page.get_by_label("Blocked referrer hosts")
    hosts.fill("spam.example\nnot a host")
    page.get_by_role("button", name="Save blocked referrers").click()
    expect(page.locator("#blocked-referrers-error")).to_contain_text("Line 2:")
    expect(page.locator("#blocked-referrers-error")).to_contain_text("not a host name")
    hosts.fill("Spam.Example\nhttps://ads.other.test/landing")
    page.get_by_role("button", name="Save blocked referrers").click()
    expect(page.get_by_role("status").filter(has_text="2 referrer hosts are blocked")).to_be_visible()
    expect(hosts).to_have_value("spam.example\nads.other.test")
    sites = console.api(page, "GET", "/api/sites")
    assert isinstance(sites, dict)
    stored = next(s for s in sites["sites"] if s["id"] == site["id"])
    assert stored["blocked_referrers"] == ["spam.example", "ads.other.test"]
