"""The main flow with the keyboard alone: sign in, add a site, copy its snippet, open its settings
and switch collection off, skip to the content, move between sections, sign out."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.web.conftest import SITE_URL, Console, unique


def tab_to(page: Page, target: Locator, limit: int = 30, key: str = "Tab") -> None:
    """Press Tab (or ``key``) until ``target`` has the focus; fails if it is not reachable."""
    for _ in range(limit):
        page.keyboard.press(key)
        if target.evaluate("element => element === document.activeElement"):
            return
    raise AssertionError(f"Tab never reached {target}")


def shows_focus(target: Locator) -> bool:
    style = target.evaluate(
        "e => { const s = getComputedStyle(e); return [s.outlineStyle, s.outlineWidth]; }"
    )
    return bool(style[0] != "none" and style[1] != "0px")


def test_the_main_flow_works_with_the_keyboard_alone(console: Console) -> None:
    ctx = console.context()
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=console.url)
    page = console.page(ctx)
    page.goto("/sites")
    expect(page.get_by_label("E-mail address")).to_be_focused()
    page.keyboard.type(OWNER_EMAIL)
    page.keyboard.press("Tab")
    expect(page.get_by_label("Password")).to_be_focused()
    page.keyboard.type(OWNER_PASSWORD)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name="Sites")).to_be_focused()

    add = page.get_by_role("button", name="Add site")
    tab_to(page, add)
    assert shows_focus(add)
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Add a site")
    expect(dialog.get_by_label("Name")).to_be_focused()
    page.keyboard.type("Keyboard shop")
    page.keyboard.press("Tab")
    expect(dialog.get_by_label("Domain")).to_be_focused()
    page.keyboard.type(unique("keys") + ".example.com")
    page.keyboard.press("Enter")
    expect(page).to_have_url(SITE_URL)
    expect(page.get_by_role("heading", level=1, name="Keyboard shop")).to_be_focused()

    copy = page.get_by_role("button", name="Copy snippet")
    tab_to(page, copy)
    assert shows_focus(copy)
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").filter(has_text="Copied to the clipboard.")).to_be_visible()

    settings = page.get_by_role("link", name="Settings")
    tab_to(page, settings, key="Shift+Tab")
    assert shows_focus(settings)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_focused()
    switch = page.get_by_role("switch", name="Collect events")
    tab_to(page, switch)
    assert shows_focus(switch)
    page.keyboard.press("Space")
    expect(page.locator(".page-subtitle .badge")).to_have_text("Disabled")
    console.shoot(page, "keyboard-site")

    page.reload()
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()

    health = page.get_by_role("navigation", name="Main").get_by_role("link", name="Health")
    tab_to(page, health, key="Shift+Tab")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/health$"))
    expect(page.get_by_role("heading", level=1, name="Health")).to_be_focused()

    sign_out = page.get_by_role("button", name="Sign out")
    tab_to(page, sign_out)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("You are signed out.")


def test_escape_closes_the_dialog_and_focus_returns_to_its_button(console: Console) -> None:
    page = console.signed_in()
    page.goto("/sites")
    add = page.get_by_role("button", name="Add site")
    expect(page.locator("main h1")).to_be_visible()
    tab_to(page, add)
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(add).to_be_focused()
