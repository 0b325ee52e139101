"""The site picker the recordings and surveys pages share: labelled, driven by the keyboard, and
kept in the address so a reload or the back button shows the same site."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.conftest import Console, unique


@pytest.mark.parametrize("section", ["recordings", "surveys"])
def test_the_site_picker_switches_site_from_the_keyboard_and_keeps_it_in_the_address(
    console: Console, section: str
) -> None:
    page = console.signed_in()
    for _ in range(2):
        console.api(
            page,
            "POST",
            "/api/sites",
            {"name": unique("Picker"), "domain": unique("picker") + ".example.org"},
        )
    listed = console.api(page, "GET", "/api/sites")
    assert isinstance(listed, dict)
    sites = listed["sites"]
    first = sites[0]
    page.goto(f"/{section}?site={first['id']}")
    picker = page.get_by_label("Site", exact=True)
    expect(picker).to_have_value(str(first["id"]))
    expect(page.get_by_role("heading", level=2, name=first["name"])).to_be_visible()
    options = picker.locator("option")
    expect(options).to_have_count(len(sites))
    expect(options.first).to_have_text(f"{first['name']} ({first['domain']})")

    picker.focus()
    page.keyboard.press("ArrowDown")
    second = sites[1]
    expect(page).to_have_url(re.compile(rf"/{section}\?site={second['id']}$"))
    expect(page.get_by_role("heading", level=2, name=second["name"], exact=True)).to_be_visible()
    expect(picker).to_have_value(str(second["id"]))
    expect(picker).to_be_focused()

    page.go_back()
    expect(page).to_have_url(re.compile(rf"/{section}\?site={first['id']}$"))
    expect(picker).to_have_value(str(first["id"]))
    page.reload()
    expect(page.get_by_label("Site", exact=True)).to_have_value(str(first["id"]))
    console.shoot(page, f"site-picker-{section}")
