"""data-consent="required": nothing stored, sent or queued before start(); everything works after it."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Page, Request

from tests.sdk.helpers import Site, Stored, open_page
from tests.support.shop import Shop

STORAGE = "() => [localStorage.length, sessionStorage.length, document.cookie]"


def test_nothing_is_stored_sent_or_queued_before_start(
    page: Page, context: BrowserContext, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.use(site.base_url, site.key, consent="required")
    to_server: list[Request] = []
    page.on("request", lambda r: to_server.append(r) if r.url.startswith(site.base_url) else None)
    open_page(page, shop.url(), ready=False)
    page.evaluate("analytics.event('before_consent', {a: 1})")
    page.evaluate("analytics.identify('early-code')")
    page.evaluate("history.pushState({}, '', '/elsewhere')")
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    page.evaluate("dispatchEvent(new PageTransitionEvent('pagehide'))")
    page.wait_for_timeout(3500)

    assert page.evaluate("analytics.status()") == {}
    assert page.evaluate("analytics.getVisitorId()") is None
    assert page.evaluate("analytics.feedback('s1')") is False
    assert page.evaluate(STORAGE) == [0, 0, ""]
    assert context.cookies() == []
    assert [r.url for r in to_server] == [f"{site.base_url}/analytics.js"]
    assert stored.all() == []

    status = page.evaluate("analytics.start()")
    assert status == {"events": "ready", "recording": "disabled", "feedback": "ready"}
    [pageview] = stored.wait(1)
    assert pageview.name == "pageview"
    assert pageview.path == "/elsewhere"
    assert pageview.visitor_id == page.evaluate("analytics.getVisitorId()") != "early-code"
    assert page.evaluate("localStorage.getItem('sightline_visitor')") is not None
    assert context.cookies() == []


def test_session_context_before_start_holds_only_the_page(page: Page, shop: Shop, site: Site) -> None:
    shop.use(site.base_url, site.key, consent="required")
    open_page(page, shop.url("/pricing?utm_source=ads"), ready=False)
    context = page.evaluate("analytics.getSessionContext()")
    assert context == {
        "url": shop.url("/pricing?utm_source=ads"),
        "path": "/pricing",
        "referrer": "",
        "utm": {"source": "ads"},
    }
    assert page.evaluate(STORAGE) == [0, 0, ""]


def test_events_after_consent_are_delivered(page: Page, shop: Shop, site: Site, stored: Stored) -> None:
    shop.use(site.base_url, site.key, consent="required", auto_pageviews="false")
    open_page(page, shop.url(), ready=False)
    page.evaluate("analytics.event('too_early')")
    page.evaluate("analytics.start().then(() => analytics.event('consented'))")
    [event] = stored.wait(1)
    assert event.name == "consented"
