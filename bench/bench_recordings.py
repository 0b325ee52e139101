"""Session recordings: bytes stored per minute of a typical visit, and the main-thread cost of starting.

Both run headless Chromium against ``sightline serve`` (SQLite) with a site that records every visit.

Bytes per minute: a typical content page (header, navigation, an article of 40 paragraphs, a
sign-up form; about 550 elements). The visit lasts ``BENCH_REC_SECONDS`` (default 60): the mouse
moves, the page scrolls down and up a screen at a time, and the visitor types into the form at
about four characters a second. Reported: the compressed bytes stored (the recorder's gzip chunks,
as the server keeps them), the same events as JSON, and the first chunk (the full snapshot).

Start cost: a page of 5,000 elements (500 cards of 10 elements). An init script wraps
``analytics._register`` so that the time spent inside it, the recorder's factory, which calls
rrweb's ``record()`` and takes the full snapshot synchronously, is measured on the page's main
thread. Also reported: the longest task of the page after the recorder's script arrived. Medians
of ``BENCH_REC_RUNS`` page loads (default 15), each in a fresh browser context.
"""

from __future__ import annotations

import gzip
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page, sync_playwright
from tests.recordings.pages import recorded_shop
from tests.support.browser import DESKTOP_CHROME, launch
from tests.support.server import LiveServer, create_owner
from tests.support.shop import Shop

EMAIL = "bench@example.com"
PASSWORD = "benchmark passphrase 123"

TIMER = """
(() => {
  let core;
  Object.defineProperty(window, 'analytics', {
    configurable: true,
    get: () => core,
    set: (value) => {
      const register = value._register;
      value._register = function (name, factory) {
        const started = performance.now();
        register.call(this, name, factory);
        if (name === 'recording') window.__recordingStart = performance.now() - started;
      };
      core = value;
    },
  });
  window.__tasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__tasks.push([e.startTime, e.duration]);
  }).observe({ type: 'longtask', buffered: true });
})();
"""


def typical_page() -> str:
    paragraphs = "".join(
        f"<section><h3>Part {i}</h3><p>Paragraph {i} of the article: <a href='/prices'>prices</a>, "
        f"<strong>delivery times</strong> and the <em>questions</em> visitors ask most often, written "
        f"out at length so that the page scrolls like a real one.</p><p>A second paragraph with a "
        f"<code>detail</code> and a <span class='note'>note</span>.</p></section>"
        for i in range(40)
    )
    nav = "".join(f"<li><a href='/section-{i}'>Section {i}</a></li>" for i in range(12))
    aside = "".join(
        f"<li><a href='/post-{i}'>Related post {i}</a> <small>{i} min</small></li>" for i in range(40)
    )
    return (
        f"<header><h1>Field notes</h1><nav><ul>{nav}</ul></nav></header>"
        f"<main><article><h2>How we ship</h2>{paragraphs}</article><aside><ul>{aside}</ul></aside>"
        "<form><label>Name <input id='name'></label><label>Message <textarea id='message' rows='4'>"
        "</textarea></label><button type='button'>Send</button></form></main><footer>Footer</footer>"
    )


def big_page() -> str:
    cards = "".join(
        f"<div class='card-{i % 3}'><h3>Item {i}</h3><p>Short text <b>{i}</b> <i>more</i></p>"
        f"<ul><li>a</li><li>b</li></ul><span>{i}</span><a href='#'>link</a></div>"
        for i in range(500)
    )
    return f"<main>{cards}</main>"


def start_server(directory: Path) -> tuple[LiveServer, httpx.Client]:
    server = LiveServer(directory / "data", None).start()
    create_owner(server, EMAIL, PASSWORD)
    owner = server.client()
    assert owner.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).status_code == 200
    return server, owner


def new_site(owner: httpx.Client, pages: Shop) -> tuple[int, str]:
    site = owner.post("/api/sites", json={"name": "Bench", "domain": pages.domain}).json()
    owner.patch(f"/api/sites/{site['id']}", json={"recording_enabled": True, "recording_sample_rate": 1})
    return int(site["id"]), str(site["key"])


def visit(page: Page, seconds: float) -> None:
    """Move, scroll and type for ``seconds``."""
    page.wait_for_function("() => analytics.status().recording === 'ready'", timeout=30000)
    deadline = time.monotonic() + seconds
    step = 0
    text = "Hello, I would like to know when my order ships. "
    while time.monotonic() < deadline:
        page.mouse.move(100 + (step * 37) % 700, 100 + (step * 53) % 500, steps=4)
        if step % 8 < 4:
            page.mouse.wheel(0, 600 if step % 16 < 8 else -600)
        elif step % 8 == 4:
            page.focus("#message")
        else:
            page.keyboard.type(text[step % len(text)], delay=0)
        step += 1
        page.wait_for_timeout(250)
    page.evaluate(
        "() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange')); }"
    )
    page.wait_for_timeout(3000)


def bytes_per_minute(browser: Browser, server: LiveServer, owner: httpx.Client, seconds: float) -> None:
    pages = recorded_shop()
    try:
        _, key = new_site(owner, pages)
        pages.use(server.base_url, key)
        pages.pages["/"] = typical_page()
        context = browser.new_context(user_agent=DESKTOP_CHROME, viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(pages.url("/"))
        elements = page.evaluate("document.getElementsByTagName('*').length")
        visit(page, seconds)
        rid = page.evaluate("analytics.getSessionContext().recordingId")
        context.close()
    finally:
        pages.close()
    files = sorted((server.data_dir / "recordings" / rid[:2] / rid).glob("*.json.gz"))
    stored = sum(f.stat().st_size for f in files)
    raw = sum(len(gzip.decompress(f.read_bytes())) for f in files)
    first = files[0].stat().st_size
    scale = 60 / seconds
    print(f"typical page: {elements} elements, {seconds:.0f} s of scrolling, mouse moves and typing")
    print(f"  chunks stored: {len(files)}; first chunk (full snapshot): {first / 1024:.1f} KiB gzip")
    print(f"  stored: {stored / 1024:.1f} KiB gzip ({raw / 1024:.1f} KiB JSON, ratio {raw / stored:.1f}x)")
    print(f"  upload requests: {len(files)} chunks in {seconds:.0f} s")
    print(f"  per minute: {stored * scale / 1024:.1f} KiB stored")
    print(f"  per minute after the snapshot: {(stored - first) * scale / 1024:.1f} KiB stored")


def start_cost(browser: Browser, server: LiveServer, owner: httpx.Client, runs: int) -> None:
    pages = recorded_shop()
    pages.head = f"<script>{TIMER}</script>"
    try:
        _, key = new_site(owner, pages)
        pages.use(server.base_url, key)
        pages.pages["/big"] = big_page()
        times: list[float] = []
        longest: list[float] = []
        elements = 0
        for _ in range(runs):
            context = browser.new_context(user_agent=DESKTOP_CHROME, viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(pages.url("/big"))
            page.wait_for_function("() => window.__recordingStart !== undefined", timeout=30000)
            page.wait_for_timeout(300)
            elements = page.evaluate("document.getElementsByTagName('*').length")
            times.append(page.evaluate("window.__recordingStart"))
            script = page.evaluate(
                "performance.getEntriesByType('resource')"
                ".find(e => e.name.includes('analytics-recording')).startTime"
            )
            tasks = page.evaluate("window.__tasks")
            longest.append(max([d for s, d in tasks if s + d >= script] or [0.0]))
            context.close()
    finally:
        pages.close()
    print(f"start on a page of {elements} elements, {runs} runs:")
    print(f"  record() and the full snapshot on the main thread: median {statistics.median(times):.1f} ms")
    print(f"  longest task after the recorder's script arrived: median {statistics.median(longest):.1f} ms")


def main() -> int:
    seconds = float(os.environ.get("BENCH_REC_SECONDS", "60"))
    runs = int(os.environ.get("BENCH_REC_RUNS", "15"))
    with tempfile.TemporaryDirectory() as directory:
        server, owner = start_server(Path(directory))
        try:
            with sync_playwright() as pw:
                browser = launch(pw)
                try:
                    start_cost(browser, server, owner, runs)
                    bytes_per_minute(browser, server, owner, seconds)
                finally:
                    browser.close()
        finally:
            owner.close()
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
