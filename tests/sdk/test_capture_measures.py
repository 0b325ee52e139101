"""Autocapture in Chromium, measures: engagement (visible time and deepest scroll per page and SPA
route), web vitals (LCP, INP, CLS, FCP, TTFB with their ratings) and heatmap clicks (selector,
position, viewport class; rage and dead clicks), each checked in the database."""

from __future__ import annotations

import time

from playwright.sync_api import Page

from tests.sdk.helpers import Site, Stored, hide_page, named, open_page
from tests.support.browser import plugins_ran
from tests.support.shop import Shop

TALL = "<h1 id='top'>Article</h1><div style='height:4000px'>long read</div><p id='end'>End</p>"


def test_engagement_counts_visible_seconds_and_the_deepest_scroll_per_spa_route(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.body = TALL
    shop.use(site.base_url, site.key, engagement="")
    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, shop.url("/article"))
    plugins_ran(page, "engagement")
    page.evaluate("window.scrollTo(0, 1600)")
    page.wait_for_timeout(2200)
    page.evaluate("window.scrollTo(0, 0)")  # the deepest point counts, not the last one
    page.evaluate("history.pushState({}, '', '/second')")
    routed = time.monotonic()
    [first] = named(stored, "engagement")
    assert first.path == "/article"
    assert 2 <= first.props["seconds"] <= 4
    height = page.evaluate("document.documentElement.scrollHeight")
    assert first.props["scroll"] == round((1600 + 800) / height * 100)
    # The next route starts from zero; hiding the tab sends what it measured, with sendBeacon.
    page.wait_for_timeout(1200)
    hide_page(page)
    shown = time.monotonic() - routed
    second = named(stored, "engagement", 2)[1]
    assert second.path == "/second"
    assert shown - 1 <= second.props["seconds"] <= shown + 1
    assert 0 < second.props["scroll"] < 40


def test_time_in_a_hidden_tab_is_not_counted(page: Page, shop: Shop, site: Site, stored: Stored) -> None:
    shop.use(site.base_url, site.key, engagement="")
    open_page(page, shop.url())
    plugins_ran(page, "engagement")
    page.wait_for_timeout(1100)
    hide_page(page)
    [first] = named(stored, "engagement")
    assert first.props["scroll"] == 100  # the whole short page was in view
    assert 1 <= first.props["seconds"] <= 2
    page.wait_for_timeout(2000)  # hidden: not counted
    page.evaluate(
        "() => { Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange')); }"
    )
    page.wait_for_timeout(1100)
    hide_page(page)
    second = named(stored, "engagement", 2)[1]
    assert second.props["scroll"] == 100
    assert 1 <= second.props["seconds"] <= 2  # the 2 hidden seconds would make it 3 or more


def test_leaving_a_page_sends_one_engagement_event_even_when_a_half_second_is_left_over(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    # The plugin's clock is the test's: 1.499 s visible when the page is left, and 10 ms more pass
    # between the pagehide and the visibilitychange that follows it (as when a link is followed).
    page.add_init_script(
        "window.__now = 0; performance.now = () => window.__now;"
        "addEventListener('visibilitychange', () => { window.__now += 10; }, true);"
    )
    shop.use(site.base_url, site.key, engagement="")
    open_page(page, shop.url())
    plugins_ran(page, "engagement")
    page.evaluate("window.__now = 1499")
    page.goto("about:blank")
    [only] = named(stored, "engagement")
    assert only.props == {"seconds": 1, "scroll": 100}
    page.wait_for_timeout(1500)  # a second event would have had the time to arrive
    assert [e.props for e in stored.all() if e.name == "engagement"] == [only.props]


def test_web_vitals_are_sent_with_value_and_rating_when_the_page_is_hidden(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.body = (
        "<h1>Fast page</h1><p>Some text large enough to be the largest paint.</p>"
        "<button id='slow'>Slow</button><div id='shift'></div>"
    )
    site.change(autocapture={"web_vitals": True})
    open_page(page, shop.url())
    plugins_ran(page, "web-vitals")
    # A slow click handler (for INP) and a layout shift (for CLS).
    page.evaluate(
        "() => document.getElementById('slow').addEventListener('click', () => {"
        " const end = performance.now() + 120; while (performance.now() < end) {}"
        " const d = document.createElement('div'); d.style.height = '200px'; d.textContent = 'new';"
        " document.body.prepend(d); })"
    )
    page.click("#slow")
    page.wait_for_timeout(1500)  # web-vitals takes interactions in at the next idle moment (1 s at most)
    hide_page(page)
    vitals = named(stored, "web_vital", 5, timeout=30)
    by_name = {v.props["name"]: v.props for v in vitals}
    assert sorted(by_name) == ["CLS", "FCP", "INP", "LCP", "TTFB"]
    for props in by_name.values():
        assert props["rating"] in ("good", "needs-improvement", "poor")
        assert props["value"] >= 0
    assert by_name["INP"]["value"] >= 100


def test_heatmap_clicks_carry_selector_position_viewport_and_tell_rage_and_dead_clicks(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.body = (
        "<main><section><button id='add'>Add</button></section>"
        "<div class='card'><span>Dead text</span><span>Other</span></div>"
        "<a id='next' href='/next'>next</a></main>"
    )
    shop.use(site.base_url, site.key, heatmaps="")
    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, shop.url())
    plugins_ran(page, "heatmaps")
    page.evaluate(
        "() => document.getElementById('add').addEventListener('click', () =>"
        " document.querySelector('main').append("
        "Object.assign(document.createElement('p'), {textContent: 'added'})))"
    )
    box = page.locator("#add").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] * 0.5)
    page.wait_for_timeout(1300)
    dead = page.locator(".card span").first
    for _ in range(4):
        dead.click(delay=10)
    page.wait_for_timeout(1300)
    page.click("#next")
    page.wait_for_url("**/next")
    clicks = named(stored, "heatmap_click", 3)
    # Each click's event may arrive in its own request, so the log's order is not the clicks' order.
    by_selector = {c.props["selector"]: c.props for c in clicks}
    dead_span = "html>body>main>div>span:nth-of-type(1)"
    assert set(by_selector) == {"button#add", dead_span, "a#next"}, by_selector
    add, rage, link = by_selector["button#add"], by_selector[dead_span], by_selector["a#next"]
    assert abs(add["x"] - 0.25) < 0.05
    assert abs(add["y"] - 0.5) < 0.1
    assert (add["viewport"], add["clicks"], add["rage"], add["dead"]) == ("laptop", 1, False, False)
    assert (rage["clicks"], rage["rage"], rage["dead"]) == (4, True, True)
    assert link["dead"] is False
    # The selector finds the element again on the page.
    page.go_back()
    assert page.evaluate(f"document.querySelector({rage['selector']!r}).textContent") == "Dead text"


def test_a_narrow_window_is_the_mobile_class(page: Page, shop: Shop, site: Site, stored: Stored) -> None:
    site.change(autocapture={"heatmaps": True})
    page.set_viewport_size({"width": 390, "height": 800})
    open_page(page, shop.url())
    plugins_ran(page, "heatmaps")
    page.click("h1")
    hide_page(page)
    [click] = named(stored, "heatmap_click")
    assert click.props["viewport"] == "mobile"
    assert click.props["selector"] == "html>body>h1"
