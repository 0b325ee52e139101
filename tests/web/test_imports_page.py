"""Imports in a real browser: a daily-figures file uploaded from a site's settings, its progress and
the list, the reports page marking imported figures with a switch to leave them out, a bad file's
error naming the line, and deleting the import; at phone width in the dark theme and on a desktop
in the light one, each page passing axe."""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.axe import assert_accessible
from tests.web.conftest import PHONE, Console, unique

FIRST = datetime.now(UTC).date() - timedelta(days=40)
DAYS = [FIRST + timedelta(days=n) for n in range(7)]
DAILY = "date,visitors,visits,pageviews,bounces,visit_duration\n" + "".join(
    f"{d.isoformat()},{10 + n},{12 + n},{30 + n},{n},{60}\n" for n, d in enumerate(DAYS)
)


def fits(tab: Page) -> None:
    width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport, f"the page is {width} px wide in a {viewport} px window"


def test_an_owner_imports_daily_figures_sees_them_marked_in_the_reports_and_deletes_them(
    console: Console,
) -> None:
    tab = console.signed_in(viewport=PHONE, scheme="dark")
    site = console.api(tab, "POST", "/api/sites", {"name": "History", "domain": f"{unique('h')}.example.com"})
    assert isinstance(site, dict)
    tab.goto(f"/sites/{site['id']}/settings#imports")
    panel = tab.get_by_role("region", name="Imports")
    expect(panel).to_be_visible()
    panel.get_by_label("File to import").set_input_files(
        {
            "name": "bad.csv",
            "mimeType": "text/csv",
            "buffer": b"date,visitors,visits,pageviews\n2024-01-01,1,x,3\n",
        }
    )
    panel.get_by_role("button", name="Import", exact=True).click()
    expect(panel.get_by_role("alert")).to_contain_text("bad.csv line 2, column visits")
    panel.get_by_label("File to import").set_input_files(
        {"name": "history.csv", "mimeType": "text/csv", "buffer": DAILY.encode()}
    )
    panel.get_by_role("button", name="Import", exact=True).click()
    expect(panel.get_by_text("history.csv is checked and being imported")).to_be_visible()
    row = panel.locator('[data-status="done"]')
    expect(row).to_contain_text("history.csv")
    expect(row).to_contain_text(f"Days {DAYS[0].isoformat()} to {DAYS[-1].isoformat()}")
    expect(row).to_contain_text("Imported")
    fits(tab)
    assert_accessible(tab, "the Imports section")
    console.shoot(tab, "imports-phone-dark")

    tab.goto(f"/sites/{site['id']}/reports?range=custom&from={DAYS[0]}&to={DAYS[-1]}")
    note = tab.locator(".report-imported")
    expect(note).to_contain_text("These figures include imported history")
    visits = sum(12 + n for n in range(7))
    expect(tab.locator('[data-metric="visits"] .report-card-value')).to_have_text(str(visits))
    fits(tab)
    assert_accessible(tab, "the reports page with imported figures")
    note.get_by_label("Include imported history").uncheck()
    expect(tab).to_have_url(re.compile(r"imported=false"))
    expect(note).to_contain_text("Imported history is left out")
    expect(tab.locator('[data-metric="visits"] .report-card-value')).to_have_text("0")

    desk = console.signed_in(scheme="light")
    desk.goto(f"/sites/{site['id']}/settings#imports")
    panel = desk.get_by_role("region", name="Imports")
    expect(panel.locator('[data-status="done"]')).to_contain_text("history.csv")
    assert_accessible(desk, "the Imports section on a desktop")
    panel.get_by_role("button", name="Delete the import of history.csv").click()
    expect(panel.get_by_text("and its figures were deleted")).to_be_visible()
    expect(panel.get_by_text("Nothing imported yet.")).to_be_visible()


def test_the_panel_offers_umami_and_matomo_beside_plausible_and_imports_each_at_phone_width(
    console: Console,
) -> None:
    data = Path(__file__).parent.parent / "imports" / "data"
    reports = io.BytesIO()
    with zipfile.ZipFile(reports, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((data / "matomo").iterdir()):
            archive.write(path, path.name)
    files = [
        ("Umami", "umami-events.csv", "text/csv", (data / "umami-events.csv").read_bytes(), "Umami events"),
        ("Matomo", "matomo.zip", "application/zip", reports.getvalue(), "Matomo reports"),
    ]
    for scheme, (tool, name, kind, body, label) in zip(("dark", "light"), files, strict=True):
        tab = console.signed_in(viewport=PHONE, scheme=scheme)
        site = console.api(tab, "POST", "/api/sites", {"name": tool, "domain": f"{unique('t')}.example.com"})
        assert isinstance(site, dict)
        tab.goto(f"/sites/{site['id']}/settings#imports")
        panel = tab.get_by_role("region", name="Imports")
        choices = panel.get_by_role("group", name=re.compile("^Where the file comes from"))
        for offered in ("Plausible", "Umami", "Matomo", "Daily figures"):
            expect(choices.get_by_role("radio", name=re.compile(f"^{offered}:"))).to_be_visible()
        choices.get_by_role("radio", name=re.compile(f"^{tool}:")).check()
        panel.get_by_label("File to import").set_input_files({"name": name, "mimeType": kind, "buffer": body})
        panel.get_by_role("button", name="Import", exact=True).click()
        row = panel.locator('[data-status="done"]')
        expect(row).to_contain_text(f"{name} ({label}")
        expect(row).to_contain_text("Days 2024-03-04 to 2024-03-05")
        fits(tab)
        assert_accessible(tab, f"the Imports section after {tool}'s import, {scheme} theme")
        console.shoot(tab, f"imports-{tool.lower()}-phone-{scheme}")
