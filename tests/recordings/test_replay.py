"""The player in the console replays what was recorded: the replay of a page looks like the page."""

from __future__ import annotations

import io

import httpx
from PIL import Image, ImageChops, ImageStat
from playwright.sync_api import Browser, Page

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.recordings.helpers import RecordingSite
from tests.support.browser import DESKTOP_CHROME
from tests.support.server import LiveServer
from tests.support.shop import Shop

# Text shows in the replay only where the site unmasks it; this page unmasks all of it.
VISUAL_PAGE = """
<div data-sl-unmask>
<header><h1>Autumn sale</h1><p>Everything must go.</p></header>
<div class="cards"><div class="card a"></div><div class="card b"></div><div class="card c"></div></div>
<footer>Free shipping on orders over 50.</footer>
</div>
"""
SIZE = (500, 350)
THRESHOLD = 6.0  # mean absolute difference per channel, 0-255


def difference(a: Image.Image, b: Image.Image) -> float:
    first = a.convert("RGB").resize(SIZE, Image.Resampling.BILINEAR)
    second = b.convert("RGB").resize(SIZE, Image.Resampling.BILINEAR)
    return sum(ImageStat.Stat(ImageChops.difference(first, second)).mean) / 3


def test_a_replay_of_a_recorded_page_shows_that_page(
    page: Page,
    pages: Shop,
    site: RecordingSite,
    server: LiveServer,
    browser: Browser,
    owner_client: httpx.Client,
) -> None:
    pages.pages["/sale"] = VISUAL_PAGE
    page.goto(pages.url("/sale"))
    page.wait_for_function(
        "() => window.analytics && analytics.getSessionContext().recordingId", timeout=20000
    )
    original = Image.open(io.BytesIO(page.screenshot()))
    recording_id = page.evaluate("analytics.getSessionContext().recordingId")

    console = browser.new_context(user_agent=DESKTOP_CHROME, viewport={"width": 1280, "height": 1000})
    try:
        login = console.request.post(
            server.base_url + "/api/login",
            data={"email": OWNER_EMAIL, "password": OWNER_PASSWORD},
            headers={"Origin": server.origin},
        )
        assert login.status == 200
        player = console.new_page()
        errors: list[str] = []
        player.on("pageerror", lambda error: errors.append(str(error)))
        player.goto(f"{server.base_url}/recordings/{recording_id}")
        player.wait_for_selector(
            ".recording-player[data-state=ready] .replayer-wrapper iframe", timeout=20000
        )
        frame = player.locator(".replayer-wrapper iframe")
        sandbox = frame.get_attribute("sandbox") or ""
        assert "allow-scripts" not in sandbox
        assert "allow-same-origin" in sandbox
        player.wait_for_function(
            "() => document.querySelector('.replayer-wrapper iframe').contentDocument"
            "?.querySelector('.card.c') !== null",
            timeout=20000,
        )
        player.add_style_tag(content=".replayer-mouse { display: none !important; }")
        player.wait_for_timeout(500)
        replay = Image.open(io.BytesIO(player.locator(".replayer-wrapper").screenshot()))
        pages_listed = player.locator(".recording-pages li").all_inner_texts()
        assert errors == []
    finally:
        console.close()

    assert difference(original, replay) < THRESHOLD
    blank = Image.new("RGB", original.size, "white")
    assert difference(original, blank) > THRESHOLD  # the measure tells a different picture apart
    assert any("/sale" in text for text in pages_listed)
