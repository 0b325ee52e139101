"""Recording in a real browser: when it starts, when its id appears, and what never leaves the page."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest
from playwright.sync_api import Page, Request, Route

from tests.recordings.helpers import RecordingSite, stored_chunk_files, stored_texts
from tests.support.server import LiveServer
from tests.support.shop import Shop

DNT = "Object.defineProperty(Navigator.prototype, 'doNotTrack', {get: () => '1'});"
GPC = "Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', {get: () => true});"
HIDE = (
    "() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
    "document.dispatchEvent(new Event('visibilitychange')); }"
)


def recorder_traffic(page: Page) -> list[str]:
    """URLs of the recorder's script and uploads requested by ``page`` from now on."""
    seen: list[str] = []

    def note(request: Request) -> None:
        if "analytics-recording.js" in request.url or "/i/recordings/" in request.url:
            seen.append(request.url)

    page.on("request", note)
    return seen


def wait_until(condition: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def open_site(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'", timeout=15000)


def test_a_recording_id_appears_only_after_the_server_acknowledged_the_full_snapshot(
    page: Page, pages: Shop, site: RecordingSite, server: LiveServer, owner_client: httpx.Client
) -> None:
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route("**/i/recordings/**", hold)
    open_site(page, pages.url("/"))
    deadline = time.monotonic() + 20
    while not held:
        assert time.monotonic() < deadline, "no chunk was uploaded"
        page.wait_for_timeout(100)
    assert page.evaluate("analytics.status().recording") == "loading"
    assert "recordingId" not in page.evaluate("analytics.getSessionContext()")
    assert owner_client.get(f"/api/sites/{site.id}/recordings").json()["recordings"] == []
    for route in held:
        route.continue_()
    page.unroute("**/i/recordings/**")
    page.wait_for_function("() => analytics.getSessionContext().recordingId !== undefined", timeout=15000)
    assert page.evaluate("analytics.status().recording") == "ready"
    recording_id = page.evaluate("analytics.getSessionContext().recordingId")
    listed = owner_client.get(f"/api/sites/{site.id}/recordings").json()["recordings"]
    assert [r["id"] for r in listed] == [recording_id]
    session = page.evaluate("analytics.getSessionContext()")
    assert listed[0]["session_id"] == session["sessionId"]
    assert listed[0]["visitor_id"] == session["visitorId"]


@pytest.mark.parametrize(
    ("why", "init_script", "changes"),
    [
        ("recording switched off", "", {"recording_enabled": False}),
        ("sample rate 0", "", {"recording_sample_rate": 0}),
        ("Do-Not-Track", DNT, {}),
        ("Global Privacy Control", GPC, {}),
    ],
)
def test_nothing_is_recorded_or_loaded_when_recording_is_not_allowed(
    why: str,
    init_script: str,
    changes: dict[str, object],
    page: Page,
    pages: Shop,
    site: RecordingSite,
    owner_client: httpx.Client,
) -> None:
    if changes:
        assert owner_client.patch(f"/api/sites/{site.id}", json=changes).status_code == 200
    if init_script:
        page.add_init_script(init_script)
    traffic = recorder_traffic(page)
    open_site(page, pages.url("/"))
    page.mouse.move(50, 50)
    page.wait_for_timeout(1500)
    assert page.evaluate("analytics.status().recording") == "disabled", why
    assert "recordingId" not in page.evaluate("analytics.getSessionContext()")
    assert traffic == [], why
    assert owner_client.get(f"/api/sites/{site.id}/recordings").json()["recordings"] == []


def test_nothing_is_recorded_before_consent_and_recording_starts_after_it(
    page: Page, pages: Shop, site: RecordingSite, server: LiveServer
) -> None:
    pages.use(server.base_url, site.key, consent="required")
    traffic = recorder_traffic(page)
    page.goto(pages.url("/"))
    page.wait_for_function("() => window.analytics !== undefined")
    page.mouse.move(20, 20)
    page.wait_for_timeout(1500)
    assert page.evaluate("analytics.status()") == {}
    assert traffic == []
    page.evaluate("analytics.start()")
    page.wait_for_function("() => analytics.getSessionContext().recordingId !== undefined", timeout=15000)
    assert any("analytics-recording.js" in url for url in traffic)


PRIVATE_PAGE = """
<header><h1 data-sl-unmask>PUBLIC-HEADING</h1></header>
<p id="text">The door code is PAGE-SECRET-7731.</p>
<label>Card number <input id="card" autocomplete="off"></label>
<div data-sl-block><p>BLOCKED-SECRET-5521</p></div>
<div data-sl-unmask><p>Shown as written</p><input id="inside"></div>
<textarea id="notes"></textarea>
"""


def test_masked_text_and_typed_input_never_reach_the_server(
    page: Page, pages: Shop, site: RecordingSite, server: LiveServer
) -> None:
    pages.pages["/private"] = PRIVATE_PAGE
    open_site(page, pages.url("/private"))
    page.wait_for_function("() => analytics.status().recording === 'ready'", timeout=15000)
    recording_id = page.evaluate("analytics.getSessionContext().recordingId")
    page.fill("#card", "")
    page.type("#card", "TYPED-SECRET-4242")
    page.type("#inside", "UNMASKED-INPUT-SECRET")
    page.type("#notes", "NOTES-SECRET-9090")
    page.evaluate("document.getElementById('text').append(' and LATE-SECRET-1188')")
    page.wait_for_timeout(300)
    page.evaluate(HIDE)

    def everything() -> str:
        return "\n".join(stored_texts(server.data_dir, recording_id))

    wait_until(lambda: everything().count('"source":5') >= 3, timeout=30)
    stored = everything()
    for secret in (
        "PAGE-SECRET",
        "TYPED-SECRET",
        "UNMASKED-INPUT-SECRET",
        "NOTES-SECRET",
        "LATE-SECRET",
        "BLOCKED-SECRET",
        "door code",
    ):
        assert secret not in stored, secret
    assert "PUBLIC-HEADING" in stored
    assert "Shown as written" in stored
    assert "*" * len("TYPED-SECRET-4242") in stored


def test_a_failed_upload_is_retried_and_the_next_page_of_the_tab_continues_the_recording(
    page: Page, pages: Shop, site: RecordingSite, server: LiveServer, owner_client: httpx.Client
) -> None:
    refused: list[str] = []

    def refuse_once(route: Route) -> None:
        if not refused:
            refused.append(route.request.url)
            body = '{"error": {"code": "storage_unavailable", "message": "Try again."}}'
            route.fulfill(
                status=503, headers={"Retry-After": "1", "Content-Type": "application/json"}, body=body
            )
        else:
            route.fallback()

    page.route("**/i/recordings/**", refuse_once)
    open_site(page, pages.url("/"))
    page.wait_for_function("() => analytics.getSessionContext().recordingId !== undefined", timeout=20000)
    assert "seq=0" in refused[0]
    page.unroute("**/i/recordings/**")
    recording_id = page.evaluate("analytics.getSessionContext().recordingId")
    page.evaluate("history.pushState({}, '', '/in-page')")
    page.mouse.move(120, 80)
    page.wait_for_timeout(200)
    page.goto(pages.url("/second"))
    page.wait_for_function("() => analytics.getSessionContext().recordingId !== undefined", timeout=20000)
    assert page.evaluate("analytics.getSessionContext().recordingId") == recording_id
    page.mouse.move(60, 60)
    page.evaluate(HIDE)

    def seqs() -> list[int]:
        return [int(p.name.split(".")[0]) for p in stored_chunk_files(server.data_dir, recording_id)]

    def indexed() -> bool:
        # A chunk's file is written before its index row commits: wait for both.
        stored = owner_client.get(f"/api/recordings/{recording_id}").json()["chunks"]
        return len(seqs()) >= 4 and stored == len(seqs())

    wait_until(indexed, timeout=20)
    assert seqs() == list(range(len(seqs())))
    details = owner_client.get(f"/api/recordings/{recording_id}").json()
    assert details["pages"] == 3  # first page, the in-page navigation, the second page
    events = owner_client.get(f"/api/recordings/{recording_id}/events").json()["events"]
    hrefs = [e["data"]["href"] for e in events if e["type"] == 4]
    marks = [e["data"]["payload"]["href"] for e in events if e["type"] == 5 and e["data"]["tag"] == "page"]
    assert hrefs == [pages.url("/"), pages.url("/second")]
    assert marks == [pages.url("/in-page")]
    assert sum(1 for e in events if e["type"] == 2) == 2


def test_a_new_visit_after_30_idle_minutes_starts_a_new_recording(
    page: Page, pages: Shop, site: RecordingSite, owner_client: httpx.Client
) -> None:
    open_site(page, pages.url("/"))
    page.wait_for_function("() => analytics.getSessionContext().recordingId !== undefined", timeout=20000)
    first = page.evaluate("analytics.getSessionContext()")
    page.evaluate(
        "() => { const v = JSON.parse(localStorage.getItem('sightline_visit'));"
        " v.l = Date.now() - 31 * 60 * 1000; localStorage.setItem('sightline_visit', JSON.stringify(v)); }"
    )
    page.wait_for_function(
        "(old) => { const c = analytics.getSessionContext();"
        " return c.recordingId && c.recordingId !== old; }",
        arg=first["recordingId"],
        timeout=20000,
    )
    second = page.evaluate("analytics.getSessionContext()")
    assert second["sessionId"] != first["sessionId"]
    listed = {r["id"]: r for r in owner_client.get(f"/api/sites/{site.id}/recordings").json()["recordings"]}
    assert listed[second["recordingId"]]["session_id"] == second["sessionId"]
    assert listed[first["recordingId"]]["session_id"] == first["sessionId"]
