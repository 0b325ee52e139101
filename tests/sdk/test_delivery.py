"""Delivery: the bounded queue before readiness, batches, retries, sendBeacon, and exactly-once storage."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from playwright.sync_api import Page, Request, Route

from tests.sdk.helpers import Site, Stored, hide_page, open_page, wait_until
from tests.support.shop import Shop

EVENTS = "**/i/events"
BATCH_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


def _bodies(requests: list[Request]) -> list[dict[str, Any]]:
    return [json.loads(r.post_data or "{}") for r in requests]


def _record(page: Page) -> list[Request]:
    sent: list[Request] = []
    page.on("request", lambda r: sent.append(r) if r.url.endswith("/i/events") else None)
    return sent


def test_events_go_in_batches_of_at_most_20_or_after_3_seconds(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.use(site.base_url, site.key, auto_pageviews="false")
    open_page(page, shop.url())
    sent = _record(page)
    started = time.monotonic()
    page.evaluate("for (let i = 0; i < 45; i++) analytics.event('e' + i)")
    wait_until(page, lambda: len(sent) == 3, 10)
    assert time.monotonic() - started > 2.5  # the last 5 waited for the 3 s window
    bodies = _bodies(sent)
    assert [len(b["events"]) for b in bodies] == [20, 20, 5]
    assert all(b["key"] == site.key and BATCH_ID.match(b["batch_id"]) for b in bodies)
    assert len({b["batch_id"] for b in bodies}) == 3
    assert all(r.headers["content-type"] == "text/plain;charset=UTF-8" for r in sent)
    assert [e.name for e in stored.wait(45)] == [f"e{i}" for i in range(45)]


def test_queue_before_readiness_keeps_the_newest_100_actions_and_counts_drops(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    held: list[Route] = []
    page.route("**/i/config*", lambda route: held.append(route))
    page.goto(shop.url())
    page.wait_for_function("() => window.analytics && analytics.status().events === 'loading'")
    page.evaluate("for (let i = 1; i <= 150; i++) analytics.event('e' + i)")
    assert page.evaluate("analytics.dropped") == 51  # the pageview and e1..e50
    wait_until(page, lambda: len(held) == 1, 10)
    held[0].continue_()
    events = stored.wait(100)
    assert [e.name for e in events] == [f"e{i}" for i in range(51, 151)]


def test_outage_then_recovery_stores_each_event_exactly_once(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    outage = True
    aborted: list[float] = []

    def network(route: Route) -> None:
        if outage:
            aborted.append(time.monotonic())
            route.abort("connectionfailed")
        else:
            route.continue_()

    page.route(EVENTS, network)
    open_page(page, shop.url())
    page.evaluate("for (let i = 0; i < 25; i++) analytics.event('during_outage_' + i)")
    wait_until(page, lambda: len(aborted) >= 3, 20)
    assert stored.all() == []
    # Exponential backoff with jitter: about 1 s, then about 2 s (each 50-100 % of the step). Each
    # time is taken before the abort reaches the page, so a wait is never shorter than its backoff;
    # it is longer by how late a loaded machine runs the page's timer and this handler (up to 0.5 s).
    assert 0.5 <= aborted[1] - aborted[0] <= 1.5
    assert 1.0 <= aborted[2] - aborted[1] <= 2.5
    outage = False
    events = stored.wait(26, timeout=40)
    assert [e.name for e in events] == ["pageview"] + [f"during_outage_{i}" for i in range(25)]
    page.wait_for_timeout(1500)
    assert len(stored.all()) == 26


def test_a_batch_whose_answer_was_lost_is_retried_with_its_id_and_stored_once(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    seen: list[str] = []

    def lose_first_answer(route: Route) -> None:
        seen.append(json.loads(route.request.post_data or "{}")["batch_id"])
        if len(seen) == 1:
            route.fetch()  # the server stores the batch ...
            route.abort("connectionreset")  # ... and the page never hears back
        else:
            route.continue_()

    page.route(EVENTS, lose_first_answer)
    open_page(page, shop.url())
    wait_until(page, lambda: len(seen) >= 2, 15)
    assert seen[0] == seen[1]
    [pageview] = stored.wait(1)
    assert pageview.batch_id == seen[0]
    page.wait_for_timeout(1000)
    assert len(stored.all()) == 1


def test_every_attempt_is_stamped_with_its_own_sent_at_so_late_events_keep_their_time(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    attempts: list[dict[str, Any]] = []

    def fail_first(route: Route) -> None:
        attempts.append(json.loads(route.request.post_data or "{}"))
        route.abort("connectionfailed") if len(attempts) == 1 else route.continue_()

    page.route(EVENTS, fail_first)
    open_page(page, shop.url())
    wait_until(page, lambda: len(attempts) >= 2, 15)
    first, second = attempts[0], attempts[1]
    assert first["batch_id"] == second["batch_id"]
    newest = max(e["ts"] for e in first["events"])
    assert newest <= first["sent_at"] < second["sent_at"]
    stored.wait(1)


def test_server_errors_and_429_are_retried_honouring_retry_after(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    answers = [
        (503, {}),
        (429, {"Retry-After": "2"}),
    ]
    times: list[float] = []

    def flaky(route: Route) -> None:
        times.append(time.monotonic())
        if answers:
            status, headers = answers.pop(0)
            cors = {
                "Access-Control-Allow-Origin": shop.origin,
                "Access-Control-Expose-Headers": "Retry-After",
            }
            body = json.dumps({"error": {"code": "overloaded", "message": "Try again later."}})
            route.fulfill(
                status=status, headers={**cors, **headers}, body=body, content_type="application/json"
            )
        else:
            route.continue_()

    page.route(EVENTS, flaky)
    open_page(page, shop.url())
    stored.wait(1)
    assert len(times) == 3
    assert times[2] - times[1] >= 1.9  # Retry-After: 2
    assert 0.5 <= times[1] - times[0] <= 1.5  # first backoff: 1 s with jitter, up to 0.5 s late


def test_client_errors_other_than_429_are_not_retried(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.use(site.base_url, site.key, auto_pageviews="false")
    calls: list[str] = []

    def refuse_first(route: Route) -> None:
        calls.append(route.request.post_data or "")
        if len(calls) == 1:
            body = json.dumps(
                {"error": {"code": "invalid_field", "message": "Bad.", "field": "events.0.name"}}
            )
            route.fulfill(status=422, headers={"Access-Control-Allow-Origin": shop.origin}, body=body)
        else:
            route.continue_()

    page.route(EVENTS, refuse_first)
    open_page(page, shop.url())
    page.evaluate("analytics.event('refused')")
    page.wait_for_timeout(4500)  # 3 s batching window, then a retry would come within 1 s
    assert len(calls) == 1
    page.evaluate("analytics.event('next')")
    [event] = stored.wait(1)
    assert event.name == "next"
    assert len(calls) == 2


def test_hiding_the_page_sends_waiting_events_with_send_beacon(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url())
    stored.wait(1)
    sent = _record(page)
    page.evaluate("analytics.event('read_article'); analytics.event('shared')")
    hide_page(page)
    wait_until(page, lambda: len(sent) == 1, 10)  # a batch sent by fetch after 3 s is no ping
    assert sent[0].resource_type == "ping"
    assert [e["name"] for e in _bodies(sent)[0]["events"]] == ["read_article", "shared"]
    events = stored.wait(3)
    assert [e.name for e in events] == ["pageview", "read_article", "shared"]


def test_leaving_the_page_loses_nothing_and_duplicates_nothing(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url())
    stored.wait(1)
    page.evaluate("analytics.event('clicked_next')")
    page.click("#next")
    page.wait_for_url("**/next")
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    events = stored.wait(3)
    assert [(e.name, e.path) for e in events] == [
        ("pageview", "/"),
        ("clicked_next", "/"),
        ("pageview", "/next"),
    ]
    page.wait_for_timeout(1500)
    assert len(stored.all()) == 3


def test_unsent_batches_survive_a_reload_during_an_outage(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    page.route(EVENTS, lambda route: route.abort("internetdisconnected"))
    # The beacon a page sends as it unloads can leave before Playwright's routing sees it: in this
    # outage beacons are lost too (sendBeacon accepts them and nothing arrives).
    page.add_init_script("Navigator.prototype.sendBeacon = function () { return true; };")
    open_page(page, shop.url())
    page.evaluate("analytics.event('before_reload')")
    page.wait_for_timeout(3500)
    page.reload()
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    assert stored.all() == []
    page.unroute(EVENTS)
    events = stored.wait(3, timeout=40)
    assert sorted(e.name for e in events) == ["before_reload", "pageview", "pageview"]
