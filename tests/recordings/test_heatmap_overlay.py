"""The click heatmap end to end in real Chromium: a visitor's clicks on a recorded page, sent by the
SDK's heatmaps capture, drawn by the console over that page's recorded snapshot at the spots they
landed (text still masked); without a recording the page says why and still lists the elements;
the page fits 390 px and passes axe in both themes."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.recordings.helpers import recording_site
from tests.support.axe import assert_accessible
from tests.support.browser import SCRIPTS_RUN, plugins_ran
from tests.support.server import LiveServer
from tests.support.shop import Shop
from tests.web.conftest import Console

OFFER = """
<main>
<h1>Secret offer</h1>
<p>Only for members of the club.</p>
<button id="buy" type="button">Buy now</button>
<div class="box"></div>
</main>
"""
STYLE = (
    "#buy{display:block;width:300px;height:80px;margin:24px}"
    ".box{width:400px;height:200px;margin:24px;background:#81b29a}"
)
# Where the visitor clicks: (selector as the SDK names it, element, share of its width, of its height).
CLICKS = [("button#buy", "#buy", 0.25, 0.25), ("html>body>main>div", ".box", 0.75, 0.75)]
PHONE = {"width": 390, "height": 844}


def _visit(page: Page, shop: Shop, path: str, *, recorded: bool) -> None:
    """Open the page, let the recorder store its snapshot, and click each spot once (the box twice)."""
    page.add_init_script(SCRIPTS_RUN)
    page.goto(shop.url(path))
    if recorded:
        page.wait_for_function(
            "() => window.analytics && analytics.getSessionContext().recordingId", timeout=20000
        )
    else:
        page.wait_for_function(
            "() => window.analytics && analytics.status().events === 'ready'", timeout=20000
        )
    plugins_ran(page, "heatmaps")
    for _, element, x, y in [*CLICKS, CLICKS[1]]:
        box = page.locator(element).bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + x * box["width"], box["y"] + y * box["height"])
        page.wait_for_timeout(1200)  # a burst ends 1 s after its last click


def _wait_for_clicks(owner: httpx.Client, site: int, path: str, clicks: int) -> dict[str, Any]:
    deadline = time.monotonic() + 40
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = owner.get(
            f"/api/sites/{site}/reports/heatmap", params={"path": path, "viewport": "desktop", "range": "7d"}
        ).json()
        if body.get("clicks") == clicks:
            return body
        time.sleep(0.3)
    raise AssertionError(f"the clicks did not reach the reports: {body}")


@pytest.fixture
def visited(page: Page, pages: Shop, server: LiveServer, owner_client: httpx.Client) -> tuple[int, Console]:
    site = recording_site(owner_client, pages.domain)
    pages.use(server.base_url, site.key, heatmaps="true")
    pages.style += STYLE
    pages.pages["/offer"] = OFFER
    _visit(page, pages, "/offer", recorded=True)
    page.goto(pages.url("/"))  # leaving sends what waits
    _wait_for_clicks(owner_client, site.id, "/offer", 3)
    return site.id, Console(page.context.browser, server)  # type: ignore[arg-type]


def _dots(tab: Page) -> list[dict[str, Any]]:
    """Each dot's centre in the recorded page's pixels, and its element's box there."""
    result: list[dict[str, Any]] = tab.evaluate(
        """() => {
          const frame = document.querySelector('.heatmap-stage iframe');
          const doc = frame.contentDocument;
          const outer = frame.getBoundingClientRect();
          const scale = outer.width / Number(frame.getAttribute('width'));
          return [...document.querySelectorAll('.heat-dot')].map((dot) => {
            const d = dot.getBoundingClientRect();
            const r = doc.querySelector(dot.dataset.selector).getBoundingClientRect();
            return {
              selector: dot.dataset.selector, clicks: Number(dot.dataset.clicks), scale,
              x: (d.left + d.width / 2 - outer.left) / scale, y: (d.top + d.height / 2 - outer.top) / scale,
              box: [r.left, r.top, r.width, r.height],
            };
          });
        }"""
    )
    return result


def test_the_heatmap_draws_the_clicks_where_they_landed_over_the_masked_recorded_page(
    visited: tuple[int, Console],
) -> None:
    site, console = visited
    try:
        tab = console.signed_in()
        tab.goto(f"/sites/{site}/heatmap?range=7d&path=%2Foffer&viewport=desktop")
        expect(tab.locator(".heatmap-stage[data-state=ready] iframe")).to_be_visible(timeout=20000)
        expect(tab.locator(".heat-dot")).to_have_count(2)
        # The way back names the site's reports, as every page of a site does.
        expect(tab.locator(".back-link")).to_contain_text(re.compile(r"Reports: \S"))
        frame = tab.locator(".heatmap-stage iframe")
        assert "allow-scripts" not in (frame.get_attribute("sandbox") or "")
        dots = {d["selector"]: d for d in _dots(tab)}
        assert set(dots) == {selector for selector, *_ in CLICKS}
        for selector, _, x, y in CLICKS:
            dot = dots[selector]
            left, top, width, height = dot["box"]
            # The spot is the centre of the cell (1/20 of the element) the click fell in.
            assert abs((dot["x"] - left) / width - x) <= 1 / 40 + 2 / width, dot
            assert abs((dot["y"] - top) / height - y) <= 1 / 40 + 2 / height, dot
        assert dots["html>body>main>div"]["clicks"] == 2
        assert dots["button#buy"]["clicks"] == 1
        text = frame.evaluate("(f) => f.contentDocument.body.textContent")
        for secret in ("Secret", "members", "Buy now"):
            assert secret not in text
        assert "******" in text
        expect(tab.locator(".heatmap-controls [aria-pressed=true]")).to_contain_text("Desktop 3")
        rows = tab.locator("table.heatmap-elements tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.first).to_contain_text("html>body>main>div")
        expect(rows.first.locator("td").last).to_have_text("Yes")

        tab.get_by_role("button", name="Phone").click()
        expect(tab.locator(".heatmap-total")).to_contain_text("0 clicks in windows narrower than 576 px")
        expect(tab.get_by_text("No recording of /offer in a phone window yet")).to_be_visible()

        for scheme, size in (("light", None), ("dark", PHONE)):
            tab = console.signed_in(scheme=scheme, viewport=size)
            tab.goto(f"/sites/{site}/heatmap?range=7d&path=%2Foffer")
            expect(tab.locator(".heat-dot")).to_have_count(2, timeout=20000)
            tab.wait_for_load_state("networkidle")
            width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width <= viewport
            assert_accessible(tab, f"the click heatmap ({scheme}, {'phone' if size else 'desktop'})")
            console.shoot(tab, f"heatmap-{scheme}-{'phone' if size else 'desktop'}")
        assert console.errors == []
    finally:
        console.close()


def test_without_a_recording_the_heatmap_says_what_to_do_and_still_lists_the_clicked_elements(
    page: Page, pages: Shop, server: LiveServer, owner_client: httpx.Client, browser: Browser
) -> None:
    site = recording_site(owner_client, pages.domain, enabled=False)
    pages.use(server.base_url, site.key, heatmaps="true")
    pages.style += STYLE
    pages.pages["/offer"] = OFFER
    _visit(page, pages, "/offer", recorded=False)
    page.goto(pages.url("/"))
    _wait_for_clicks(owner_client, site.id, "/offer", 3)
    console = Console(browser, server)
    try:
        tab = console.signed_in(viewport=PHONE)
        tab.goto(f"/sites/{site.id}/heatmap?range=7d&path=%2Foffer")
        notice = tab.locator(".notice", has_text="recordings are off for this site")
        expect(notice).to_be_visible()
        expect(notice.get_by_role("link", name="Turn recordings on")).to_have_attribute(
            "href", f"/sites/{site.id}/settings"
        )
        expect(tab.locator(".heat-dot")).to_have_count(0)
        rows = tab.locator("table.heatmap-elements tbody tr")
        expect(rows).to_have_count(2)
        expect(tab.locator("table.heatmap-elements thead")).not_to_contain_text("On the page shown")
        assert_accessible(tab, "the click heatmap without a recording (phone)")

        owner_client.patch(f"/api/sites/{site.id}", json={"recording_enabled": True})
        tab.goto(f"/sites/{site.id}/heatmap?range=7d&path=%2Foffer")
        expect(tab.get_by_text("No recording of /offer yet")).to_be_visible()
        assert console.errors == []
    finally:
        console.close()
