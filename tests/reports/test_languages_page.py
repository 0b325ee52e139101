"""Languages in real Chromium: the console names each language code in the browser's own locale
(``de`` is "German" to an English browser and "Deutsch" to a German one), and the table's search,
the filter's suggestions and the filter chip find and show that name."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.reports import helpers
from tests.support.server import LiveServer
from tests.web.conftest import Console, unique

# (language, visitors)
SPOKEN = [("de", 3), ("fr", 2), ("pt", 1)]


@pytest.fixture(scope="module")
def speaking(console_server: LiveServer) -> int:
    """A site with visitors of three languages in the last hour (or since midnight)."""

    def rows(site_id: int, start: datetime) -> list[dict[str, Any]]:
        return [
            replace(
                helpers.pageview(site_id, start + timedelta(seconds=i), f"{language}-{i}", "/"),
                language=language,
            ).row()
            for language, count in SPOKEN
            for i in range(count)
        ]

    return helpers.site_with_rows(console_server, "Polyglot", unique("lang") + ".example.com", rows)


def _languages(tab: Page, site_id: int) -> None:
    tab.goto(f"/sites/{site_id}/reports?range=today")
    panel = tab.locator(".report-panel", has=tab.get_by_role("heading", name="Devices"))
    panel.get_by_role("button", name="Languages").click()


def test_languages_are_named_and_a_click_filters_by_the_name_the_owner_reads(
    console: Console, speaking: int
) -> None:
    tab = console.signed_in(locale="en-US")
    _languages(tab, speaking)
    table = tab.locator('.report-panel table[data-dimension="language"]')
    expect(table.locator("tbody tr th")).to_have_text(["German", "French", "Portuguese"])
    table.get_by_role("button", name=re.compile("French")).click()
    expect(tab).to_have_url(re.compile(r"language=fr"))
    expect(tab.locator(".filter-chip")).to_contain_text("Language is French")


def test_the_languages_details_are_searched_by_name_or_code(console: Console, speaking: int) -> None:
    tab = console.signed_in(locale="en-US")
    _languages(tab, speaking)
    tab.get_by_role("button", name="Details: all languages").click()
    dialog = tab.get_by_role("dialog")
    for text, language in (("germ", "German"), ("Portu", "Portuguese"), ("fr", "French")):
        dialog.get_by_label("Search").fill(text)
        expect(dialog.locator("tbody tr")).to_have_count(1)
        expect(dialog.locator("tbody tr").first).to_contain_text(language)


def test_the_language_filter_suggests_each_code_with_its_name(console: Console, speaking: int) -> None:
    tab = console.signed_in(locale="en-US")
    tab.goto(f"/sites/{speaking}/reports?range=today")
    tab.get_by_role("button", name="Add a filter").click()
    form = tab.get_by_role("form", name="Add a filter")
    form.get_by_label("Filter").select_option("language")
    options = tab.locator("datalist#filter-suggestions option")
    expect(options).to_have_count(3)
    labels = {o.get_attribute("value"): o.get_attribute("label") for o in options.all()}
    assert labels == {"de": "German", "fr": "French", "pt": "Portuguese"}
    form.get_by_role("combobox", name="Value", exact=True).fill("pt")
    form.get_by_role("button", name="Apply").click()
    expect(tab.locator(".filter-chip")).to_contain_text("Language is Portuguese")


def test_a_german_browser_reads_the_languages_in_german(console: Console, speaking: int) -> None:
    tab = console.signed_in(locale="de-DE")
    _languages(tab, speaking)
    table = tab.locator('.report-panel table[data-dimension="language"]')
    expect(table.locator("tbody tr th")).to_have_text(["Deutsch", "Französisch", "Portugiesisch"])
