"""window.analytics in a real Chromium on the customer's own origin: start, status, identify, visitor
codes, session context and event delivery, against the live server."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page

from tests.sdk.helpers import Site, Stored, open_page
from tests.support.shop import Shop

ID = re.compile(r"^[a-z0-9]{21}$")


def test_sdk_starts_itself_and_its_pageview_is_stored(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url("/products?color=red"))
    assert page.evaluate("analytics.status()") == {
        "events": "ready",
        "recording": "disabled",
        "feedback": "ready",
    }
    [pageview] = stored.wait(1)
    assert pageview.name == "pageview"
    assert pageview.path == "/products"
    assert pageview.visitor_id == page.evaluate("analytics.getVisitorId()")
    assert pageview.session_id == page.evaluate("analytics.getSessionContext().sessionId")


def test_start_returns_the_same_promise_on_every_call_and_fetches_the_config_once(
    page: Page, shop: Shop, site: Site
) -> None:
    configs: list[str] = []
    page.on("request", lambda r: configs.append(r.url) if "/i/config" in r.url else None)
    open_page(page, shop.url())
    same = page.evaluate("analytics.start() === analytics.start()")
    result = page.evaluate("analytics.start()")
    assert same is True
    assert result == {"events": "ready", "recording": "disabled", "feedback": "ready"}
    assert configs == [f"{site.base_url}/i/config?key={site.key}"]


def test_custom_event_with_props_is_stored_with_its_props(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.use(site.base_url, site.key, auto_pageviews="false")
    open_page(page, shop.url("/checkout"))
    page.evaluate("analytics.event('purchase', {plan: 'pro', amount: 49.5, trial: false, seats: 3})")
    [event] = stored.wait(1)
    assert event.name == "purchase"
    assert event.props == {"plan": "pro", "amount": 49.5, "trial": False, "seats": 3}
    assert event.path == "/checkout"


def test_visitor_code_is_kept_in_local_storage_across_reloads(page: Page, shop: Shop, site: Site) -> None:
    open_page(page, shop.url())
    visitor = page.evaluate("analytics.getVisitorId()")
    assert ID.match(visitor)
    assert page.evaluate("localStorage.getItem('sightline_visitor')") == f'"{visitor}"'
    page.reload()
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    assert page.evaluate("analytics.getVisitorId()") == visitor


def test_identify_replaces_the_visitor_code_of_later_events(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url())
    stored.wait(1)
    page.evaluate("analytics.identify('member-8f3a')")
    assert page.evaluate("analytics.getVisitorId()") == "member-8f3a"
    page.evaluate("analytics.event('signed_in')")
    first, second = stored.wait(2)
    assert second.name == "signed_in"
    assert second.visitor_id == "member-8f3a"
    assert first.visitor_id != "member-8f3a"
    assert first.session_id == second.session_id
    page.reload()
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    assert page.evaluate("analytics.getVisitorId()") == "member-8f3a"


def test_session_context_describes_the_visit(page: Page, shop: Shop, site: Site) -> None:
    page.goto(shop.url("/"))
    page.evaluate(
        f"location.href = {shop.url('/landing?utm_source=news&utm_medium=email&utm_campaign=spring')!r}"
    )
    page.wait_for_url("**/landing*")
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    context = page.evaluate("analytics.getSessionContext()")
    assert set(context) == {"sessionId", "visitorId", "startedAt", "url", "path", "referrer", "utm"}
    assert ID.match(context["sessionId"])
    assert context["visitorId"] == page.evaluate("analytics.getVisitorId()")
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", context["startedAt"])
    assert context["path"] == "/landing"
    assert context["url"] == shop.url("/landing?utm_source=news&utm_medium=email&utm_campaign=spring")
    assert context["referrer"] == shop.url("/")
    assert context["utm"] == {"source": "news", "medium": "email", "campaign": "spring"}
    assert "recordingId" not in context


def test_a_visit_ends_after_30_minutes_without_activity(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    page.clock.install()
    open_page(page, shop.url())
    first = page.evaluate("analytics.getSessionContext()")
    page.clock.fast_forward("29:00")
    page.evaluate("analytics.event('still_here')")
    assert page.evaluate("analytics.getSessionContext().sessionId") == first["sessionId"]
    page.clock.fast_forward("31:00")
    page.evaluate("analytics.event('back_again')")
    second = page.evaluate("analytics.getSessionContext()")
    assert second["sessionId"] != first["sessionId"]
    assert second["startedAt"] > first["startedAt"]
    assert second["visitorId"] == first["visitorId"]
    page.clock.fast_forward("00:04")
    events = stored.wait(3)
    assert [e.session_id for e in events] == [first["sessionId"], first["sessionId"], second["sessionId"]]


def test_unknown_site_key_shows_error_without_unhandled_rejection(page: Page, shop: Shop, site: Site) -> None:
    shop.use(site.base_url, "no-such-key-at-all")
    open_page(page, shop.url(), ready=False)
    status = page.evaluate("analytics.start()")
    assert status == {"events": "error", "recording": "disabled", "feedback": "error"}
    page.evaluate("analytics.event('ignored')")
    assert page.evaluate("analytics.feedback('survey-1')") is False


def test_page_on_an_origin_other_than_the_site_domain_shows_error(page: Page, shop: Shop, site: Site) -> None:
    response = site.owner.post("/api/sites", json={"name": "Other", "domain": f"localhost:{shop.port}"})
    other = response.json()
    shop.use(site.base_url, other["key"])
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/i/config" in r.url else None)
    open_page(page, shop.url(), ready=False)
    assert page.evaluate("analytics.start().then(s => s.events)") == "error"
    # The refusal is final: the page does not keep asking for the configuration.
    page.clock.fast_forward("05:00")
    page.wait_for_timeout(300)
    assert len(asked) == 1


def test_site_with_collection_off_shows_disabled_and_sends_nothing(
    page: Page, shop: Shop, site: Site
) -> None:
    site.change(collection_enabled=False)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "/i/events" in r.url else None)
    open_page(page, shop.url(), ready=False)
    assert page.evaluate("analytics.start()") == {
        "events": "disabled",
        "recording": "disabled",
        "feedback": "disabled",
    }
    page.evaluate("analytics.event('nobody_listens')")
    page.wait_for_timeout(500)
    assert sent == []


def test_collection_switched_off_while_the_page_is_open_stops_sending(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url())
    stored.wait(1)
    site.change(collection_enabled=False)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "/i/events" in r.url else None)
    for _ in range(40):  # the server may answer from its site cache for a moment
        page.evaluate("analytics.event('after_switch_off')")
        if page.evaluate("analytics.status().events") == "disabled":
            break
        page.wait_for_timeout(1000)
    assert page.evaluate("analytics.status()") == {
        "events": "disabled",
        "recording": "disabled",
        "feedback": "disabled",
    }
    requests, count = len(sent), len(stored.all())
    page.evaluate("analytics.event('later')")
    page.wait_for_timeout(3500)
    assert len(sent) == requests
    assert len(stored.all()) == count


@pytest.mark.parametrize("storage", ["localStorage", "sessionStorage"])
def test_blocked_storage_does_not_stop_collection(
    page: Page, shop: Shop, site: Site, stored: Stored, storage: str
) -> None:
    blocked = "{get() { throw new DOMException('blocked', 'SecurityError'); }}"
    page.add_init_script(f"Object.defineProperty(window, '{storage}', {blocked});")
    open_page(page, shop.url())
    page.evaluate("analytics.identify('member-1')")
    page.evaluate("analytics.event('works')")
    events = stored.wait(2, timeout=25)
    assert [e.name for e in events] == ["pageview", "works"]
    assert events[1].visitor_id == "member-1"
