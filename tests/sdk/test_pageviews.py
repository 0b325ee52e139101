"""Automatic pageviews: at start and on single-page navigation, unless data-auto-pageviews="false"."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.sdk.helpers import Site, Stored, hide_page, open_page
from tests.support.shop import Shop


def test_single_page_navigation_sends_a_pageview_per_new_address(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url("/"))
    page.evaluate("history.pushState({}, '', '/products')")
    page.evaluate("history.replaceState({}, '', '/products')")  # same address: no new pageview
    page.evaluate("history.pushState({}, '', '/products#reviews')")  # only the fragment changed
    page.evaluate("history.replaceState({}, '', '/products?page=2')")
    page.evaluate("history.back()")
    page.wait_for_function("() => location.pathname === '/products' && location.search === ''")
    hide_page(page)
    events = stored.wait(4)
    assert [(e.name, e.path) for e in events] == [
        ("pageview", "/"),
        ("pageview", "/products"),
        ("pageview", "/products"),
        ("pageview", "/products"),
    ]
    page.wait_for_timeout(500)
    assert len(stored.all()) == 4


def test_pushstate_keeps_returning_what_the_browser_returns(page: Page, shop: Shop, site: Site) -> None:
    open_page(page, shop.url("/"))
    assert page.evaluate("history.pushState({n: 1}, '', '/a') === undefined && history.state.n === 1") is True
    assert page.evaluate("location.pathname") == "/a"


def test_restoring_a_page_from_the_back_forward_cache_counts_a_pageview(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url("/article"))
    stored.wait(1)
    page.evaluate("dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))")
    page.evaluate("dispatchEvent(new PageTransitionEvent('pageshow', {persisted: false}))")
    events = stored.wait(2)
    assert [(e.name, e.path) for e in events] == [("pageview", "/article"), ("pageview", "/article")]


def test_auto_pageviews_false_sends_only_custom_events(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.use(site.base_url, site.key, auto_pageviews="false")
    open_page(page, shop.url("/"))
    page.evaluate("history.pushState({}, '', '/products')")
    page.evaluate("analytics.event('viewed_products')")
    [event] = stored.wait(1)
    assert event.name == "viewed_products"
    assert event.path == "/products"
    page.wait_for_timeout(500)
    assert len(stored.all()) == 1
