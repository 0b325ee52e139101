"""The recordings list as cards on a phone, and the player's accessibility: named controls, no
focus stops inside the replay, nothing blocked in the browser console, jumps to the right page."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, ViewportSize, expect

from tests.recordings.helpers import RecordingSite, chunk, new_recording_id, page_events, post_chunk
from tests.support.server import LiveServer
from tests.web.conftest import Console, unique

SIZES: dict[str, ViewportSize] = {
    "desktop": {"width": 1280, "height": 800},
    "phone": {"width": 390, "height": 844},
}


@pytest.fixture
def recorded(console: Console, console_server: LiveServer) -> dict[str, Any]:
    """A site with one recording of two pages: /first ("First page") then /second ("Second page")."""
    tab = console.signed_in()
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Replay shop", "domain": unique("rec") + ".example.com"}
    )
    assert isinstance(site, dict)
    console.api(tab, "PATCH", f"/api/sites/{site['id']}", {"recording_enabled": True})
    tab.context.close()
    origin = f"https://{site['domain']}"
    target = RecordingSite(site["id"], site["key"], origin)
    rid = new_recording_id()
    now = int(time.time() * 1000) - 60_000
    events = page_events(now, href=origin + "/first", text="First page")
    events += page_events(now + 20_000, href=origin + "/second", text="Second page")
    visitor = "visitor-" + "7f3a9c1e5b2d4a6f8e0c1b3d5f7a9c1e"
    response = post_chunk(console_server, target, rid, 0, chunk(events, visitor=visitor))
    assert response.status_code == 202, response.text
    return {"site": site["id"], "recording": rid}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_recordings_list_is_cards_on_a_phone(
    console: Console, recorded: dict[str, Any], scheme: str
) -> None:
    page = console.signed_in(scheme=scheme, viewport=SIZES["phone"])
    page.goto(f"/recordings?site={recorded['site']}")
    row = page.locator(f"tr[data-recording-id='{recorded['recording']}']")
    expect(row).to_be_visible(timeout=15_000)
    width, viewport = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    size = row.locator("td[data-label='Size']")
    box = size.bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= viewport
    visitor = row.locator("td.recordings-visitor").bounding_box()
    assert visitor is not None
    assert visitor["height"] < 70, "the visitor code wraps over more than two lines"
    console.shoot(page, f"recordings-{scheme}-phone")


def test_the_player_names_its_controls_keeps_focus_out_of_the_replay_and_jumps_to_the_page(
    console: Console, recorded: dict[str, Any]
) -> None:
    page = console.signed_in(scheme="dark")
    messages: list[str] = []

    def keep(message: ConsoleMessage) -> None:
        messages.append(message.text)

    page.on("console", keep)
    page.goto(f"/recordings/{recorded['recording']}")
    player = page.locator(".recording-player[data-state='ready']")
    expect(player).to_be_visible(timeout=15_000)
    expect(player.get_by_role("button", name="Play")).to_be_visible()
    expect(player.get_by_role("button", name="Full screen")).to_be_attached()
    time_colour = player.locator(".rr-timeline__time").first.evaluate("e => getComputedStyle(e).color")
    assert time_colour == page.evaluate("getComputedStyle(document.body).color")
    assert player.locator("iframe").get_attribute("title") == "Replay of the visit"
    # Tab from the play button never lands inside the replayed page.
    player.get_by_role("button", name="Play").focus()
    for _ in range(12):
        page.keyboard.press("Tab")
        inside = page.evaluate(
            "() => document.activeElement && document.activeElement.closest('.replayer-wrapper') !== null"
        )
        assert not inside
    page.locator(".recording-pages button").filter(has_text="/second").click()
    replay = page.frame_locator(".replayer-wrapper iframe")
    expect(replay.locator("body")).to_have_text("Second page")
    page.locator(".recording-pages button").filter(has_text="/first").click()
    expect(replay.locator("body")).to_have_text("First page")
    console.shoot(page, "player-dark")
    blocked = [m for m in messages if "Blocked script execution" in m]
    assert blocked == []
