"""A site's settings page: its sections, the time zone, and deleting the site with a typed confirmation."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.sync_api import Browser, expect

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer
from tests.support.server import create_owner
from tests.web.conftest import Console, show, unique

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def test_the_time_zone_and_first_weekday_are_chosen_on_the_settings_page_and_used_by_the_reports(
    console: Console,
) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Zone shop", "domain": unique("zone") + ".example.com"}
    )
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}/settings")
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_visible()
    toc = page.get_by_role("navigation", name="Settings sections")
    for label in ("Name and domain", "Time zone", "Collection and recording", "Delete site"):
        expect(toc.get_by_role("link", name=label)).to_be_visible()
    zone = page.get_by_label("Reports' time zone")
    expect(zone).to_have_value("UTC")
    expect(page.get_by_role("button", name="Save time zone")).to_be_disabled()
    zone.select_option("Europe/Berlin")
    page.get_by_role("button", name="Save time zone").click()
    expect(page.get_by_role("status").filter(has_text="The reports now use Europe/Berlin.")).to_be_visible()
    sites = console.api(page, "GET", "/api/sites")
    assert isinstance(sites, dict)
    assert next(s for s in sites["sites"] if s["id"] == site["id"])["timezone"] == "Europe/Berlin"
    page.reload()
    expect(page.get_by_label("Reports' time zone")).to_have_value("Europe/Berlin")
    week = page.get_by_label("First day of the week")
    expect(week).to_have_value("monday")
    week.select_option("sunday")
    page.get_by_role("button", name="Save time zone and week").click()
    expect(page.get_by_role("status").filter(has_text="Weeks start on Sunday.")).to_be_visible()
    sites = console.api(page, "GET", "/api/sites")
    assert isinstance(sites, dict)
    assert next(s for s in sites["sites"] if s["id"] == site["id"])["week_start"] == "sunday"


def test_deleting_a_site_needs_its_domain_typed_and_removes_it(console: Console) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Doomed shop", "domain": unique("doomed") + ".example.com"}
    )
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}/settings")
    page.get_by_role("button", name="Delete this site…").click()
    dialog = page.get_by_role("dialog", name="Delete Doomed shop?")
    expect(dialog).to_be_visible()
    confirm = dialog.get_by_label(f"Type the domain, {site['domain']}, to confirm")
    delete = dialog.get_by_role("button", name="Delete for good")
    expect(delete).to_be_disabled()
    confirm.fill("something else")
    expect(delete).to_be_disabled()
    console.shoot(page, "settings-delete-dialog")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    sites = console.api(page, "GET", "/api/sites")
    assert isinstance(sites, dict)
    assert site["id"] in [s["id"] for s in sites["sites"]]

    page.get_by_role("button", name="Delete this site…").click()
    dialog.get_by_label(f"Type the domain, {site['domain']}, to confirm").fill(str(site["domain"]).upper())
    dialog.get_by_role("button", name="Delete for good").click()
    expect(page).to_have_url(f"{console.url}/sites?deleted=Doomed%20shop")
    expect(
        page.get_by_role("status").filter(has_text="Doomed shop is deleted, with all its data.")
    ).to_be_visible()
    expect(page.locator(f"[data-site-id='{site['id']}']")).to_have_count(0)
    page.goto(f"/sites/{site['id']}/settings")
    expect(page.get_by_role("heading", level=1, name="Site not found")).to_be_visible()


def test_the_settings_page_fits_the_screen_in_both_themes(console: Console) -> None:
    """One load, checked in both themes on a desktop and a phone (``show``: a load and a tab per look
    before)."""
    page = console.signed_in(scheme="light", viewport=SIZES["desktop"])
    site = console.api(
        page,
        "POST",
        "/api/sites",
        {"name": "A shop with a long name", "domain": unique("fit") + ".example.com"},
    )
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}/settings")
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_visible()
    page.wait_for_load_state("networkidle")
    for scheme in ("light", "dark"):
        for size, viewport in SIZES.items():
            show(page, scheme, viewport)
            width, shown = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width <= shown, f"{scheme}, {size}: the page is {width}px wide in a {shown}px window"
            console.shoot(page, f"settings-{scheme}-{size}")


def test_the_custom_range_starts_on_today_in_the_sites_zone(console: Console) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Far east shop", "domain": unique("kiritimati") + ".example.com"}
    )
    assert isinstance(site, dict)
    # UTC+14: its date differs from the browser's (UTC) for 14 hours of every day.
    console.api(page, "PATCH", f"/api/sites/{site['id']}", {"timezone": "Pacific/Kiritimati"})
    page.goto(f"/sites/{site['id']}/reports")
    expect(page.get_by_text("days and hours in")).to_contain_text("Pacific/Kiritimati")
    page.get_by_role("button", name="Custom").click()
    today = datetime.now(ZoneInfo("Pacific/Kiritimati")).date().isoformat()
    expect(page.get_by_label("From", exact=True)).to_have_value(today)
    expect(page.get_by_label("To", exact=True)).to_have_value(today)


def test_a_pasted_address_is_cleaned_into_a_domain(console: Console) -> None:
    page = console.signed_in()
    page.goto("/sites")
    page.get_by_role("button", name="Add site").click()
    dialog = page.get_by_role("dialog", name="Add a site")
    expect(dialog.get_by_text("host:port, e.g. localhost:8080")).to_be_visible()
    dialog.get_by_label("Name").fill("Pasted")
    port = 20000 + int(unique("p")[-4:], 16) % 20000
    dialog.get_by_label("Domain").fill(f"http://127.0.0.1:{port}/shop/?from=ads")
    dialog.get_by_role("button", name="Add site").click()
    expect(page.get_by_role("heading", level=1, name="Pasted")).to_be_visible()
    expect(page.locator(".page-subtitle .site-domain")).to_have_text(f"127.0.0.1:{port}")


def test_a_check_refused_for_a_private_address_names_the_flag_that_allows_it(
    browser: Browser, start_server: StartServer
) -> None:
    strict = start_server()  # the operator did not allow private addresses
    create_owner(strict, OWNER_EMAIL, OWNER_PASSWORD)
    helper = Console(browser, strict)
    try:
        page = helper.signed_in()
        site = helper.api(page, "POST", "/api/sites", {"name": "Local", "domain": "localhost:8732"})
        assert isinstance(site, dict)
        page.goto(f"/sites/{site['id']}")
        page.get_by_role("button", name="Check connection").click()
        connection = page.get_by_role("region", name="Connection")
        # The check runs on the server: on a loaded machine it can take longer than expect's 5 s.
        expect(connection.get_by_role("alert")).to_contain_text(
            "start Sightline with --allow-private-addresses (or SIGHTLINE_ALLOW_PRIVATE_ADDRESSES=true)",
            timeout=20_000,
        )
        expect(connection.locator(".badge")).to_have_text("Error", timeout=20_000)
    finally:
        helper.close()
    assert helper.errors == []


def test_autocapture_is_switched_on_the_settings_page_and_its_extensions_are_checked(
    console: Console,
) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Capture shop", "domain": unique("capture") + ".example.com"}
    )
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}/settings#autocapture")
    expect(page.get_by_role("heading", level=2, name="Autocapture")).to_be_visible()
    heatmaps = page.get_by_role("switch", name="Click heatmaps")
    expect(heatmaps).not_to_be_checked()
    heatmaps.check()
    expect(page.get_by_role("status").filter(has_text="Click heatmaps: on.")).to_be_visible()
    page.get_by_role("switch", name="Web vitals").check()
    expect(page.get_by_role("status").filter(has_text="Web vitals: on.")).to_be_visible()
    extensions = page.get_by_label("File download extensions")
    expect(extensions).to_have_value(re.compile(r"^pdf, csv, txt, "))
    extensions.fill("pdf, z!p")
    page.get_by_role("button", name="Save extensions").click()
    expect(page.get_by_text("'z!p' is not a file extension")).to_be_visible()
    expect(extensions).to_have_attribute("aria-invalid", "true")
    extensions.fill(".PDF, zip")
    page.get_by_role("button", name="Save extensions").click()
    expect(page.get_by_role("status").filter(has_text="The extensions are saved.")).to_be_visible()
    expect(extensions).to_have_value("pdf, zip")
    sites = console.api(page, "GET", "/api/sites")
    assert isinstance(sites, dict)
    stored = next(s for s in sites["sites"] if s["id"] == site["id"])["autocapture"]
    assert (stored["heatmaps"], stored["web_vitals"], stored["engagement"]) == (True, True, False)
    assert stored["file_download_extensions"] == ["pdf", "zip"]
    page.reload()
    expect(page.get_by_role("switch", name="Click heatmaps")).to_be_checked()
    page.get_by_role("button", name="Restore the default list").click()
    expect(page.get_by_label("File download extensions")).to_have_value(re.compile(r"^pdf, csv, txt, "))


def test_exporting_a_visitor_code_with_no_data_says_so_and_downloads_nothing(console: Console) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Rights", "domain": unique("rights") + ".example.com"}
    )
    assert isinstance(site, dict)
    page.goto(f"/sites/{site['id']}/settings")
    downloads: list[object] = []
    page.on("download", lambda download: downloads.append(download))
    page.get_by_label("Visitor code").fill("no-such-visitor")
    page.get_by_role("button", name="Export as JSON").click()
    notice = page.get_by_role("status").filter(has_text="Nothing is stored")
    expect(notice).to_contain_text('Nothing is stored about the visitor code "no-such-visitor" on Rights')
    expect(notice).to_contain_text("nothing was downloaded")
    expect(page.get_by_text("downloaded as JSON")).to_have_count(0)
    assert downloads == []


def test_the_goals_of_the_settings_show_edit_and_delete_without_scrolling_on_a_phone(
    console: Console,
) -> None:
    page = console.signed_in(viewport=SIZES["phone"])
    site = console.api(
        page, "POST", "/api/sites", {"name": "Goal shop", "domain": unique("goals") + ".example.com"}
    )
    assert isinstance(site, dict)
    goal = {"name": "Purchase", "kind": "event", "event": "purchase"}
    console.api(
        page,
        "POST",
        f"/api/sites/{site['id']}/goals",
        {**goal, "revenue": {"prop": "amount", "currency": "USD"}},
    )
    page.goto(f"/sites/{site['id']}/settings#goals")
    delete = page.get_by_role("button", name="Delete the goal Purchase")
    expect(delete).to_be_visible()
    table = page.locator(".goals-table")
    # The table fits its panel (nothing to scroll sideways to), and Delete sits inside it.
    inside = table.evaluate(
        """(t) => {
          const panel = t.closest('.panel').getBoundingClientRect();
          const button = [...t.querySelectorAll('button')].pop().getBoundingClientRect();
          return [t.getBoundingClientRect().right <= panel.right, button.right <= panel.right - 1];
        }"""
    )
    assert inside == [True, True], "the goals table reaches past its panel at 390 px"
    # The description wraps between words: "purchase;" stays whole on one line.
    lines = table.locator("td", has_text="Sent the event").evaluate(
        """(td) => {
          const text = td.firstChild, at = text.textContent.indexOf('purchase');
          const range = document.createRange();
          range.setStart(text, at);
          range.setEnd(text, at + 'purchase;'.length);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        }"""
    )
    assert lines == 1, "the event's name is broken over lines"
