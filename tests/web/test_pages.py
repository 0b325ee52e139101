"""Health, first-run setup, themes and small screens, in a real browser."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.conftest import StartServer
from tests.web.conftest import DESKTOP, PHONE, SITE_URL, Console, backend_of, show, unique


def test_health_shows_the_overall_status_and_the_database_figures(console: Console) -> None:
    page = console.signed_in()
    page.goto("/health")
    expect(page.get_by_role("heading", level=1, name="Health")).to_be_visible()
    overall = page.get_by_role("region", name="Overall")
    expect(overall.locator(".badge")).to_have_text(re.compile(r"^(OK|Degraded)$"))
    expect(overall).to_contain_text("Version ")
    database = page.get_by_role("region", name="Database")
    expect(database.locator(".badge")).to_have_text("OK")
    engine = "PostgreSQL" if backend_of(console.server) == "postgresql" else "SQLite"
    expect(database.locator("div").filter(has_text="Engine")).to_contain_text(engine)
    expect(database.locator("div").filter(has_text="Round trip")).to_contain_text(re.compile(r"\d ms"))
    disk = page.get_by_role("region", name="Disk")
    expect(disk.locator("div").filter(has_text="Free space")).to_contain_text(
        re.compile(r"\d+(\.\d)? [KMGT]iB")
    )
    page.get_by_role("button", name="Check now").click()
    expect(page.get_by_role("button", name="Check now")).to_be_enabled()


def test_health_figures_read_as_words_process_ids_as_digits_and_no_row_is_empty(console: Console) -> None:
    page = console.signed_in()
    page.goto("/health")
    expect(page.locator("[data-service] dd").first).to_be_visible()
    rows = page.locator("[data-service] .figures > div").evaluate_all(
        "(all) => all.map((d) => [d.querySelector('dt').textContent, d.querySelector('dd').innerText.trim()])"
    )
    assert rows, "no figures shown"
    for name, value in rows:
        assert value, f"the row {name!r} is empty"
        assert value not in ("None", "null", "undefined"), f"{name}: {value}"
    names = [name for name, _ in rows]
    # Figures are named in words, not by the API's field names.
    for raw in ("Pid", "Writer pid", "Lag events", "Fed events", "Last group batches", "Queue depth"):
        assert raw not in names, f"a figure is named by its field: {raw!r}"
    assert "Events waiting" in names, names
    pids = [value for name, value in rows if re.search(r"process id$", name, re.IGNORECASE)]
    assert pids, rows
    for value in pids:
        assert re.fullmatch(r"\d+|Not running", value), f"a process id reads {value!r}"


def test_health_shows_the_e_mail_job_and_the_recordings_retention_with_their_next_run(
    console: Console,
) -> None:
    page = console.signed_in()
    page.goto("/health")
    retention = page.get_by_role("region", name="Recordings retention")
    expect(retention.locator(".badge")).to_have_text("OK")
    expect(retention.locator("div").filter(has_text="Next run")).to_contain_text(
        re.compile(r"in \d+ (minute|hour)")
    )
    expect(retention.locator("div").filter(has_text="Last run")).to_contain_text(re.compile(r"ago|just now"))
    mail = page.get_by_role("region", name="E-mail reports")
    expect(mail.locator("div").filter(has_text="Set up")).to_contain_text("No")


def no_horizontal_scroll(page: Page) -> None:
    width, viewport = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport, f"the page is {width}px wide in a {viewport}px window"


BACKGROUNDS = {"light": "rgb(245, 246, 248)", "dark": "rgb(14, 17, 21)"}
# Both themes on a desktop and on a phone.
SIZES = {"desktop": DESKTOP, "phone": PHONE}
LOOKS = [(scheme, size) for scheme in BACKGROUNDS for size in SIZES]


def fits_in_every_look(console: Console, page: Page, name: str, first: int) -> None:
    """The page in each look, starting with LOOKS[first] (the one it was loaded in): the theme's
    background and no sideways scrolling."""
    for scheme, size in LOOKS[first:] + LOOKS[:first]:
        show(page, scheme, SIZES[size])
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == BACKGROUNDS[scheme]
        no_horizontal_scroll(page)
        console.shoot(page, f"{name}-{scheme}-{size}")


def test_every_page_fits_the_screen_in_both_themes(console: Console) -> None:
    """Each page is loaded once and checked in the four looks (a load and a tab per look before);
    the look a page loads in turns with each page, so every look is also checked as a page first
    renders in it."""
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Garden centre", "domain": unique("garden") + ".example.org"}
    )
    assert isinstance(site, dict)
    pages = [("/sites", "sites"), (f"/sites/{site['id']}", "site"), ("/health", "health")]
    for n, (path, name) in enumerate(pages):
        scheme, size = LOOKS[n % len(LOOKS)]
        show(page, scheme, SIZES[size])
        page.goto(path)
        expect(page.locator("main h1")).to_be_visible()
        page.wait_for_load_state("networkidle")
        fits_in_every_look(console, page, name, n % len(LOOKS))
    page.context.clear_cookies()
    scheme, size = LOOKS[len(pages) % len(LOOKS)]
    show(page, scheme, SIZES[size])
    page.goto("/login")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    fits_in_every_look(console, page, "login", len(pages) % len(LOOKS))


def test_the_theme_toggle_is_remembered_across_visits(console: Console) -> None:
    page = console.signed_in(scheme="light")
    page.goto("/sites")
    expect(page.locator("main h1")).to_be_visible()
    page.get_by_role("button", name="Use the dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(14, 17, 21)"
    page.goto("/health")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(page.get_by_role("button", name="Use the light theme")).to_be_visible()
    page.get_by_role("button", name="Use the light theme").click()
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(245, 246, 248)"


def test_first_run_setup_creates_the_owner_and_opens_the_sites_page(
    console: Console, start_server: StartServer
) -> None:
    fresh = start_server()
    link = fresh.setup_link()
    assert link is not None
    page = console.page()
    page.goto(link)
    expect(page).to_have_url(f"{fresh.base_url}/setup")
    expect(page.get_by_role("heading", name="Set up Sightline")).to_be_visible()
    page.get_by_label("E-mail address").fill("first@example.com")
    page.get_by_label("Password", exact=True).fill("long enough password")
    page.get_by_label("Repeat the password").fill("another password!!")
    page.get_by_role("button", name="Create owner account").click()
    expect(page.get_by_role("alert")).to_have_text("The two passwords differ.")
    expect(page.get_by_label("Repeat the password")).to_be_focused()
    console.shoot(page, "setup-error")
    page.get_by_label("Repeat the password").fill("long enough password")
    page.get_by_role("button", name="Create owner account").click()
    expect(page).to_have_url(f"{fresh.base_url}/sites")
    expect(page.get_by_role("heading", level=2, name="No sites yet")).to_be_visible()
    expect(page.get_by_text("Signed in as first@example.com")).to_be_attached()
    page.goto(link)
    expect(page.get_by_role("heading", name="This setup link is not valid")).to_be_visible()


def test_the_site_page_link_from_the_list_opens_the_site(console: Console) -> None:
    page = console.signed_in(viewport=PHONE)
    host = unique("linked") + ".example.net"
    console.api(page, "POST", "/api/sites", {"name": "Linked shop", "domain": host})
    page.goto("/sites")
    page.get_by_role("link", name="Linked shop").click()
    expect(page).to_have_url(SITE_URL)
    expect(page.get_by_role("heading", level=1, name="Linked shop")).to_be_focused()
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Sites")).to_have_attribute(
        "aria-current", "page"
    )


def test_the_narrowest_supported_screen_needs_no_horizontal_scrolling(console: Console) -> None:
    page = console.signed_in(viewport={"width": 360, "height": 740})
    site = console.api(
        page,
        "POST",
        "/api/sites",
        {
            "name": "A rather long site name for a narrow phone",
            "domain": unique("narrow-screen-check") + ".example.co.uk",
        },
    )
    assert isinstance(site, dict)
    for path in ("/sites", f"/sites/{site['id']}", "/health"):
        page.goto(path)
        expect(page.locator("main h1")).to_be_visible()
        page.wait_for_load_state("networkidle")
        no_horizontal_scroll(page)
    page.goto("/sites")
    page.get_by_role("button", name="Add site").click()
    expect(page.get_by_role("dialog")).to_be_visible()
    no_horizontal_scroll(page)
