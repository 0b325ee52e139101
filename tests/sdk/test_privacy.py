"""Do-Not-Track and Global Privacy Control, feedback() and the lazily loaded plugins."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Request, Route

from tests.sdk.helpers import Site, Stored, open_page, wait_until
from tests.support.shop import Shop

SIGNALS = {
    "gpc": "Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', {get: () => true});",
    "dnt": "Object.defineProperty(Navigator.prototype, 'doNotTrack', {get: () => '1'});",
}


def _plugin_requests(page: Page) -> list[Request]:
    """Plugins the page loaded, but the autocapture loader, which every started page loads."""
    requests: list[Request] = []
    page.on(
        "request",
        lambda r: requests.append(r) if "/analytics-" in r.url and "analytics-capture" not in r.url else None,
    )
    return requests


@pytest.mark.parametrize("signal", ["gpc", "dnt"])
def test_privacy_signal_turns_feedback_and_recording_off_but_keeps_events(
    page: Page, shop: Shop, site: Site, stored: Stored, signal: str
) -> None:
    site.change(recording_enabled=True, recording_sample_rate=1.0)
    page.add_init_script(SIGNALS[signal])
    plugins = _plugin_requests(page)
    open_page(page, shop.url())
    status = page.evaluate("analytics.status()")
    assert status == {"events": "ready", "recording": "disabled", "feedback": "disabled"}
    assert page.evaluate("analytics.feedback('survey-1')") is False
    assert plugins == []
    [pageview] = stored.wait(1)
    assert pageview.name == "pageview"


def test_without_a_privacy_signal_feedback_is_ready(page: Page, shop: Shop, site: Site) -> None:
    page.add_init_script("Object.defineProperty(Navigator.prototype, 'doNotTrack', {get: () => '0'});")
    open_page(page, shop.url())
    assert page.evaluate("analytics.status().feedback") == "ready"


def test_recording_is_loaded_lazily_only_for_sites_that_record(page: Page, shop: Shop, site: Site) -> None:
    plugins = _plugin_requests(page)
    open_page(page, shop.url())
    assert plugins == []
    assert page.evaluate("analytics.status().recording") == "disabled"
    site.change(recording_enabled=True, recording_sample_rate=1.0)
    held: list[Route] = []
    page.route("**/analytics-recording.js", lambda route: held.append(route))
    page.reload()
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    wait_until(page, lambda: len(held) == 1, 10)
    assert [r.url for r in plugins] == [f"{site.base_url}/analytics-recording.js"]
    # Until the recorder runs and reports, the connection loads and no recording code is shown.
    assert page.evaluate("analytics.status().recording") == "loading"
    assert "recordingId" not in page.evaluate("analytics.getSessionContext()")
    held[0].continue_()
    page.wait_for_function("() => analytics.status().recording !== 'loading'", timeout=15000)


def test_a_visit_outside_the_recording_sample_loads_no_recorder(page: Page, shop: Shop, site: Site) -> None:
    site.change(recording_enabled=True, recording_sample_rate=0.0)
    plugins = _plugin_requests(page)
    open_page(page, shop.url())
    assert page.evaluate("analytics.status().recording") == "disabled"
    assert plugins == []


def test_feedback_resolves_false_before_start(page: Page, shop: Shop, site: Site) -> None:
    shop.use(site.base_url, site.key, consent="required")
    plugins = _plugin_requests(page)
    open_page(page, shop.url(), ready=False)
    assert page.evaluate("analytics.feedback('survey-1')") is False
    assert plugins == []


@pytest.mark.parametrize("argument", ["", "undefined", "null", "{}", "['a']", "'survey-1'", "7"])
def test_feedback_never_throws_and_resolves_a_boolean(
    page: Page, shop: Shop, site: Site, argument: str
) -> None:
    open_page(page, shop.url())
    call = f"analytics.feedback({argument}).then(v => typeof v)"
    result = page.evaluate(f"() => {{ try {{ return {call}; }} catch (e) {{ return 'threw'; }} }}")
    assert result == "boolean"
