"""The Recordings section of the console: a site's list, opening the player, deleting a recording."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.recordings.helpers import (
    chunk,
    moves,
    new_recording_id,
    page_events,
    post_chunk,
    recording_site,
    stored_chunk_files,
)
from tests.recordings.pages import recorded_shop
from tests.support.browser import DESKTOP_CHROME
from tests.support.server import LiveServer
from tests.web.conftest import ARTIFACTS

NOW = int(time.time() * 1000)


@pytest.fixture
def console(browser: Browser, server: LiveServer) -> Iterator[BrowserContext]:
    """A browser context signed in as the owner."""
    ctx = browser.new_context(user_agent=DESKTOP_CHROME, viewport={"width": 1280, "height": 900})
    login = ctx.request.post(
        server.base_url + "/api/login",
        data={"email": OWNER_EMAIL, "password": OWNER_PASSWORD},
        headers={"Origin": server.origin},
    )
    assert login.status == 200
    yield ctx
    ctx.close()


def test_the_owner_finds_a_recording_in_the_list_replays_it_and_deletes_it(
    console: BrowserContext, server: LiveServer, owner_client: httpx.Client
) -> None:
    site = recording_site(owner_client)
    rid = new_recording_id()
    href = site.origin + "/checkout"
    assert (
        post_chunk(server, site, rid, 0, chunk(page_events(NOW, href=href, text="Checkout"))).status_code
        == 202
    )
    assert post_chunk(server, site, rid, 1, chunk(moves(NOW + 65_000))).status_code == 202
    page = console.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server.base_url}/recordings?site={site.id}")
    row = page.locator(f"tr[data-recording-id='{rid}']")
    row.wait_for(timeout=15000)
    assert "1 min 05 s" in row.inner_text()
    assert page.locator("nav a[href='/recordings']").count() == 1

    row.locator("a").click()
    page.wait_for_url(f"**/recordings/{rid}")
    page.wait_for_selector(".recording-player[data-state=ready] .replayer-wrapper iframe", timeout=15000)
    csp = page.evaluate("() => fetch(location.href).then(r => r.headers.get('content-security-policy'))")
    assert "script-src 'self'" in csp
    assert "unsafe-eval" not in csp
    assert page.locator(".recording-pages li").inner_text().endswith("/checkout")
    assert page.locator(".rr-controller").count() == 1

    page.get_by_role("button", name="Delete").click()
    page.get_by_role("group", name="Delete this recording?").get_by_role("button", name="Delete").click()
    page.wait_for_url(f"**/recordings?site={site.id}")
    page.wait_for_selector(".recordings-empty", timeout=15000)
    assert owner_client.get(f"/api/recordings/{rid}").status_code == 404
    assert stored_chunk_files(server.data_dir, rid) == []
    assert errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_five_second_visit_is_listed_with_its_length_entry_page_browser_and_device(
    browser: Browser, server: LiveServer, owner_client: httpx.Client, scheme: str
) -> None:
    shop = recorded_shop()
    try:
        site = recording_site(owner_client, shop.domain)
        shop.use(server.base_url, site.key)
        visitor = browser.new_context(user_agent=DESKTOP_CHROME, viewport={"width": 1000, "height": 700})
        tab = visitor.new_page()
        arrived = time.monotonic()
        tab.goto(shop.url("/landing?ref=mail"))
        tab.wait_for_function("() => analytics.getSessionContext().recordingId !== undefined", timeout=15000)
        rid = tab.evaluate("analytics.getSessionContext().recordingId")
        tab.wait_for_timeout(5_000)  # the visitor reads, touching nothing
        tab.close(run_before_unload=True)  # pagehide: the last chunk leaves by beacon
        stayed_ms = (time.monotonic() - arrived) * 1000
        # The visitor's browser stays open until the beacon has arrived: closing its context at once
        # can cancel the request still in flight (it did on a loaded machine).
        deadline = time.monotonic() + 20
        while True:
            listed = {
                r["id"]: r for r in owner_client.get(f"/api/sites/{site.id}/recordings").json()["recordings"]
            }
            if listed.get(rid, {}).get("duration_ms", 0) >= 4_500:
                break
            assert time.monotonic() < deadline, f"the visit's end never reached the recording: {listed}"
            time.sleep(0.2)
        visitor.close()
        recording = listed[rid]
        assert recording["duration_ms"] <= stayed_ms + 500  # from the first snapshot to the page's end
        assert (recording["entry_page"], recording["browser"], recording["device"]) == (
            "/landing",
            "Chrome",
            "desktop",
        )

        ctx = browser.new_context(color_scheme=scheme, viewport={"width": 390, "height": 844})  # type: ignore[arg-type]
        ctx.request.post(
            server.base_url + "/api/login",
            data={"email": OWNER_EMAIL, "password": OWNER_PASSWORD},
            headers={"Origin": server.origin},
        )
        page = ctx.new_page()
        page.goto(f"{server.base_url}/recordings?site={site.id}")
        row = page.locator(f"tr[data-recording-id='{rid}']")
        expect(row.locator("td[data-label='Entry page']")).to_contain_text("/landing")
        expect(row.locator("td[data-label='Browser']")).to_contain_text("Chrome · Desktop")
        expect(row.locator("td[data-label='Duration']")).to_have_text(
            f"{round(recording['duration_ms'] / 1000)} s"
        )
        width, viewport = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= viewport
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"recordings-list-{scheme}-phone.png"), full_page=True)
        ctx.close()
    finally:
        shop.close()


def test_replaying_a_real_page_with_scripts_logs_no_blocked_script_message(
    browser: Browser, console: BrowserContext, server: LiveServer, owner_client: httpx.Client
) -> None:
    shop = recorded_shop()
    shop.head = "<script>document.documentElement.dataset.ready = 'yes';</script>"
    shop.body += "<script>window.shopLoaded = true;</script><noscript>Enable scripts</noscript>"
    try:
        site = recording_site(owner_client, shop.domain)
        shop.use(server.base_url, site.key)
        visitor = browser.new_context(user_agent=DESKTOP_CHROME)
        tab = visitor.new_page()
        tab.goto(shop.url("/"))
        tab.wait_for_function("() => analytics.getSessionContext().recordingId !== undefined", timeout=15000)
        rid = tab.evaluate("analytics.getSessionContext().recordingId")
        tab.evaluate(
            "() => { const s = document.createElement('script'); s.textContent = '1';"
            " document.body.append(s); }"
        )
        tab.close(run_before_unload=True)
        visitor.close()
        page = console.new_page()
        messages: list[str] = []
        page.on("console", lambda message: messages.append(f"{message.type}: {message.text}"))
        # Chromium reports a script blocked by a frame's sandbox through the DevTools log, which
        # Playwright's console event does not carry: listen to the protocol's Log domain too.
        devtools = console.new_cdp_session(page)
        devtools.on("Log.entryAdded", lambda entry: messages.append(f"log: {entry['entry']['text']}"))
        devtools.send("Log.enable")
        page.goto(f"{server.base_url}/recordings/{rid}")
        page.wait_for_selector(".recording-player[data-state=ready] .replayer-wrapper iframe", timeout=15000)
        page.get_by_role("button", name="Play").click()
        page.wait_for_timeout(3000)
        assert [m for m in messages if "Blocked script execution" in m] == []
        # The listener does hear the message: a script put into the replay's sandboxed frame is
        # blocked, and Chromium says so.
        page.locator(".replayer-wrapper iframe").evaluate(
            "f => { const s = f.contentDocument.createElement('script'); s.textContent = '1';"
            " f.contentDocument.body.append(s); }"
        )
        # The message comes as a protocol event, heard while Playwright is called: wait for it.
        deadline = time.monotonic() + 15
        while not any("Blocked script execution" in m for m in messages):
            assert time.monotonic() < deadline, messages
            page.wait_for_timeout(100)
    finally:
        shop.close()
