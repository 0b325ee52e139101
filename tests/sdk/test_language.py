"""The visitor's language: the SDK sends ``navigator.language``'s primary subtag with each event,
which ingest keeps before the request's ``Accept-Language``; before consent nothing is sent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Request

from tests.sdk.helpers import Site, Stored, open_page
from tests.support.browser import DESKTOP_CHROME, watched
from tests.support.shop import Shop


@pytest.fixture
def austrian(browser: Browser) -> Iterator[Page]:
    """A desktop Chrome tab set to Austrian German whose requests' header names another language,
    so that the stored language shows which of the two the server kept."""
    context = browser.new_context(
        user_agent=DESKTOP_CHROME, locale="de-AT", extra_http_headers={"Accept-Language": "fr-CH, fr;q=0.9"}
    )
    with watched(context.new_page()) as tab:
        yield tab
    context.close()


def test_events_carry_the_browsers_language_as_its_primary_subtag_only(
    austrian: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    sent: list[Request] = []
    austrian.on("request", lambda r: sent.append(r) if r.url.endswith("/i/events") else None)
    stored.page = austrian
    open_page(austrian, shop.url())
    assert austrian.evaluate("navigator.language") == "de-AT"
    austrian.evaluate("analytics.event('Signup', {plan: 'pro'})")
    events = stored.wait(2)
    assert [(e.name, e.language) for e in events] == [("pageview", "de"), ("Signup", "de")]
    bodies: list[dict[str, Any]] = [r.post_data_json or {} for r in sent]
    assert {event["language"] for body in bodies for event in body["events"]} == {"de"}


def test_without_the_sdks_language_the_requests_header_names_it(
    austrian: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    # An event the page's own code sends (a server, or an older SDK) without a language field.
    stored.page = austrian
    open_page(austrian, shop.url())
    response = austrian.evaluate(
        """async ([base, key]) => (await fetch(base + '/i/events', {method: 'POST', body: JSON.stringify({
            key, batch_id: 'b'.repeat(16), events: [{name: 'server', props: {}, ts: Date.now(),
            visitor_id: 'v1', session_id: 's1', url: location.href, path: '/', referrer: '', title: '',
            screen: 1280}]})})).status""",
        [site.base_url, site.key],
    )
    assert response == 202
    [server] = [e for e in stored.wait(2) if e.name == "server"]
    assert server.language == "fr"


def test_before_consent_no_event_and_so_no_language_leaves_the_page(
    austrian: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    sent: list[Request] = []
    austrian.on("request", lambda r: sent.append(r) if "/i/" in r.url else None)
    shop.use(site.base_url, site.key, consent="required")
    stored.page = austrian
    open_page(austrian, shop.url(), ready=False)
    austrian.wait_for_timeout(500)
    assert sent == []
    austrian.evaluate("analytics.start()")
    [pageview] = stored.wait(1)
    assert pageview.language == "de"
