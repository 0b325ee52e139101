"""The sites pages in a real browser: creating, the snippet, switches, the connection check."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from tests.support.ports import free_port
from tests.web.conftest import SITE_URL, Console, CustomerSite, unique


def closed_port() -> int:
    """A loopback port nothing listens on, and unlike a port the kernel hands out, none of the
    module's customer sites (whose domains are taken) had it."""
    return free_port()


def open_add_dialog(page: Page) -> None:
    page.goto("/sites")
    page.get_by_role("button", name="Add site").click()
    expect(page.get_by_role("dialog", name="Add a site")).to_be_visible()


def create_site(console: Console, page: Page, domain: str, name: str = "Shop") -> dict[str, Any]:
    site = console.api(page, "POST", "/api/sites", {"name": name, "domain": domain})
    assert isinstance(site, dict)
    return site


def test_creating_a_site_shows_the_domain_error_on_the_field_then_opens_the_new_site(
    console: Console,
) -> None:
    page = console.signed_in()
    open_add_dialog(page)
    dialog = page.get_by_role("dialog", name="Add a site")
    dialog.get_by_label("Name").fill("Bakery")
    domain = dialog.get_by_label("Domain")
    domain.fill("bakery.example.com/menu")  # a path without a scheme is not an address to clean
    dialog.get_by_role("button", name="Add site").click()
    expect(page.locator("#site-domain-error")).to_have_text(
        "Give only the host name, without scheme or path, for example example.com."
    )
    expect(domain).to_have_attribute("aria-invalid", "true")
    expect(domain).to_be_focused()
    console.shoot(page, "site-create-field-error")

    host = unique("bakery") + ".example.com"
    domain.fill(host.upper())
    dialog.get_by_role("button", name="Add site").click()
    expect(page).to_have_url(SITE_URL)
    expect(page.get_by_role("heading", level=1, name="Bakery")).to_be_focused()
    expect(page.get_by_text(host, exact=True).first).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="The site is added")).to_be_visible()
    connection = page.get_by_role("region", name="Connection")
    expect(connection.locator(".badge")).to_have_text("Pending")

    page.get_by_role("link", name="All sites").click()
    row = page.get_by_role("listitem").filter(has=page.get_by_role("link", name="Bakery"))
    expect(row.filter(has_text=host)).to_have_count(1)
    expect(row.locator(".badge").first).to_have_text("Pending")
    expect(row).to_contain_text("Not checked")


def test_adding_a_domain_twice_shows_the_conflict_on_the_domain_field(console: Console) -> None:
    page = console.signed_in()
    host = unique("twice") + ".example.com"
    create_site(console, page, host)
    open_add_dialog(page)
    dialog = page.get_by_role("dialog", name="Add a site")
    dialog.get_by_label("Name").fill("Again")
    dialog.get_by_label("Domain").fill(host)
    dialog.get_by_role("button", name="Add site").click()
    expect(page.locator("#site-domain-error")).to_have_text("You already have a site with this domain.")
    expect(dialog).to_be_visible()


def test_cancelling_the_dialog_returns_focus_to_the_button_that_opened_it(console: Console) -> None:
    page = console.signed_in()
    open_add_dialog(page)
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_role("button", name="Add site")).to_be_focused()


def test_copy_snippet_puts_the_exact_tag_on_the_clipboard(console: Console) -> None:
    page = console.signed_in(clipboard=True)
    site = create_site(console, page, unique("copy") + ".example.com")
    page.goto(f"/sites/{site['id']}")
    page.get_by_role("button", name="Copy snippet").click()
    expect(page.get_by_role("status").filter(has_text="Copied to the clipboard.")).to_be_visible()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == site["snippet"]
    console.shoot(page, "site-snippet-copied")

    page.get_by_label("Wait for consent").check()
    page.get_by_role("button", name="Copy snippet").click()
    expected = site["snippet"].replace("></script>", ' data-consent="required"></script>')
    expect(page.locator("pre.snippet")).to_have_text(expected)
    # The snippet changed with the box; the clipboard has it once the button says so.
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == expected


def test_without_clipboard_access_the_snippet_is_selected_for_a_manual_copy(console: Console) -> None:
    page = console.signed_in()
    page.add_init_script("Object.defineProperty(navigator, 'clipboard', { value: undefined });")
    site = create_site(console, page, unique("manual") + ".example.com")
    page.goto(f"/sites/{site['id']}")
    page.get_by_role("button", name="Copy snippet").click()
    expect(page.get_by_role("status").filter(has_text="press Ctrl+C")).to_be_visible()
    assert page.evaluate("String(window.getSelection())") == site["snippet"]


def test_switching_collection_off_shows_the_site_as_disabled(console: Console) -> None:
    page = console.signed_in()
    site = create_site(console, page, unique("switch") + ".example.com")
    page.goto(f"/sites/{site['id']}")
    page.get_by_role("navigation", name="This site's data").get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_focused()
    switch = page.get_by_role("switch", name="Collect events")
    expect(switch).to_be_checked()
    switch.uncheck()
    expect(page.get_by_role("status").filter(has_text="Collection is off.")).to_be_visible()
    expect(page.locator(".page-subtitle .badge")).to_have_text("Disabled")
    console.shoot(page, "site-collection-off")

    page.reload()
    expect(page.get_by_role("switch", name="Collect events")).not_to_be_checked()
    page.goto(f"/sites/{site['id']}")
    connection = page.get_by_role("region", name="Connection")
    expect(connection.locator(".badge")).to_have_text("Disabled")
    expect(connection).to_contain_text("Collection is switched off")
    page.goto("/sites")
    row = page.locator(f"[data-site-id='{site['id']}']")
    expect(row.locator(".badge")).to_have_text("Disabled")

    page.goto(f"/sites/{site['id']}/settings")
    page.get_by_role("switch", name="Collect events").check()
    expect(page.locator(".page-subtitle .badge")).to_have_text("Pending")


def test_recording_switch_and_sample_rate_are_saved_and_validated(console: Console) -> None:
    page = console.signed_in()
    site = create_site(console, page, unique("record") + ".example.com")
    page.goto(f"/sites/{site['id']}/settings")
    page.get_by_role("switch", name="Record sessions").check()
    expect(page.get_by_role("status").filter(has_text="Recording is on.")).to_be_visible()

    rate = page.get_by_label("Share of visits recorded (%)")
    rate.fill("150")
    page.get_by_role("button", name="Save share").click()
    expect(page.locator("#sample-rate-error")).to_have_text("Enter a share from 0 to 100 percent.")
    rate.fill("25")
    page.get_by_role("button", name="Save share").click()
    expect(page.get_by_role("status").filter(has_text="Recording 25% of visits.")).to_be_visible()
    expect(page.locator("#sample-rate-error")).to_have_count(0)

    sites = console.api(page, "GET", "/api/sites")
    assert isinstance(sites, dict)
    saved = next(s for s in sites["sites"] if s["id"] == site["id"])
    assert saved["recording_enabled"] is True
    assert saved["recording_sample_rate"] == 0.25


def test_renaming_a_site_changes_its_heading_and_refuses_an_empty_name(console: Console) -> None:
    page = console.signed_in()
    site = create_site(console, page, unique("rename") + ".example.com", name="Old name")
    page.goto(f"/sites/{site['id']}/settings")
    details = page.get_by_role("region", name="Details")
    expect(details.locator("div").filter(has_text="Domain")).to_contain_text(site["domain"])
    expect(details.locator("div").filter(has_text="Added")).to_contain_text(re.compile(r"\d{4}"))
    field = page.get_by_label("Site name")
    field.fill("   ")
    page.get_by_role("button", name="Rename").click()
    expect(page.locator("#site-rename-error")).to_have_text("Give the site a name.")
    field.fill("New name")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("status").filter(has_text="The site is renamed.")).to_be_visible()
    page.get_by_role("link", name="New name").click()
    expect(page.get_by_role("heading", level=1, name="New name")).to_be_visible()
    expect(page).to_have_title("New name · Sightline")


def test_checking_the_connection_shows_connected_then_the_wait_before_the_next_check(
    console: Console, customer_site: Callable[[], CustomerSite]
) -> None:
    shop = customer_site()
    page = console.signed_in()
    site = create_site(console, page, shop.domain)
    shop.serve_snippet(site["snippet"])
    page.goto(f"/sites/{site['id']}")
    check = page.get_by_role("button", name="Check connection")
    check.click()
    connection = page.get_by_role("region", name="Connection")
    expect(connection.locator(".badge")).to_have_text("Connected")
    expect(connection.get_by_role("status")).to_have_text(
        f"The snippet with this site's key is on the home page of {shop.domain}."
    )
    expect(connection).to_contain_text("snippet found")
    console.shoot(page, "site-connected")

    page.get_by_role("button", name="Check connection").click()
    expect(connection.get_by_role("alert")).to_have_text(
        re.compile(r"^This site was checked a moment ago; try again shortly\. Wait \d+ seconds\.$")
    )
    expect(connection.get_by_role("button", name=re.compile(r"^Check again in \d+ s$"))).to_be_disabled()
    # The message and the button count down the same wait (both read at one moment: a second may
    # pass between two reads on a loaded machine).
    message, button = connection.evaluate(
        "c => [c.querySelector('[role=alert]').innerText, c.querySelector('.panel-actions button').innerText]"
    )
    said = re.search(r"Wait (\d+) seconds?", message)
    shown = re.search(r"in (\d+) s", button)
    assert said is not None
    assert shown is not None
    assert abs(int(said.group(1)) - int(shown.group(1))) <= 1

    page.goto("/sites")
    row = page.locator(f"[data-site-id='{site['id']}']")
    expect(row.locator(".badge")).to_have_text("Connected")
    expect(row).to_contain_text("snippet found")


def test_a_failed_check_is_explained_in_words(
    console: Console, customer_site: Callable[[], CustomerSite]
) -> None:
    page = console.signed_in()
    without = customer_site()
    other_key = customer_site()
    missing = create_site(console, page, without.domain)
    mismatched = create_site(console, page, other_key.domain)
    other_key.serve_snippet(missing["snippet"])

    page.goto(f"/sites/{missing['id']}")
    page.get_by_role("button", name="Check connection").click()
    connection = page.get_by_role("region", name="Connection")
    expect(connection.locator(".badge")).to_have_text("Error")
    expect(connection.get_by_role("alert")).to_contain_text(
        f"The home page of {without.domain} loaded, but it has no Sightline snippet."
    )

    page.goto(f"/sites/{mismatched['id']}")
    page.get_by_role("button", name="Check connection").click()
    expect(page.get_by_role("region", name="Connection").get_by_role("alert")).to_contain_text(
        "has a Sightline snippet with another site's key"
    )
    closed = create_site(console, page, f"127.0.0.1:{closed_port()}")
    page.goto(f"/sites/{closed['id']}")
    page.get_by_role("button", name="Check connection").click()
    expect(page.get_by_role("region", name="Connection").get_by_role("alert")).to_contain_text(
        "could not load the home page"
    )

    page.goto("/sites")
    expect(page.locator(f"[data-site-id='{missing['id']}']")).to_contain_text("has no Sightline snippet")
    console.shoot(page, "sites-with-errors")


def test_an_unknown_site_id_shows_not_found(console: Console) -> None:
    page = console.signed_in()
    page.goto("/sites/999999")
    expect(page.get_by_role("heading", level=1, name="Site not found")).to_be_visible()
    page.goto("/sites/1/no-such-page")
    expect(page.get_by_role("heading", level=1, name="Page not found")).to_be_visible()
    page.get_by_role("link", name="Go to your sites").click()
    expect(page.get_by_role("heading", level=1, name="Sites")).to_be_visible()


def test_an_unknown_console_address_shows_the_consoles_not_found_page_and_api_paths_keep_json(
    console: Console,
) -> None:
    page = console.signed_in()
    for address in ("/settings", "/dashboard", "/no/such/page"):
        answer = page.goto(address)
        assert answer is not None
        assert answer.status == 404
        expect(page.get_by_role("heading", level=1, name="Page not found")).to_be_visible()
        expect(page.locator("main")).to_contain_text(address)
    page.get_by_role("link", name="Go to your sites").click()
    expect(page.get_by_role("heading", level=1, name="Sites")).to_be_visible()
    api = page.goto("/api/no/such/thing")
    assert api is not None
    assert api.status == 404
    assert api.json()["error"]["code"] == "not_found"
    with console.server.client() as client:  # a client that does not ask for HTML keeps the error shape
        plain = client.get("/settings")
        assert plain.status_code == 404
        assert plain.json()["error"]["code"] == "not_found"
