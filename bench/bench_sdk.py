"""The browser SDK: the core script's gzipped size, and the time from script start to ``ready``.

Size: ``analytics.js`` as built by esbuild (``npm run build`` in sdk/ when missing), gzipped at level 9
as the server serves it, against the 3,072-byte budget.

Time to ready: headless Chromium loads a customer page from its own loopback origin with the snippet
(the SDK starts itself) against ``sightline serve`` on SQLite. A deferred script placed just before
the snippet records the moment the SDK starts executing (deferred scripts run in order) and, at
DOMContentLoaded, notes when ``analytics.start()`` resolves: when the site's configuration has been
fetched (status ``events: "ready"``). Each run uses a fresh browser context (no cache, no storage),
so it includes fetching analytics.js from the server. Reported: medians over ``BENCH_SDK_RUNS``
runs (default 30).
"""

from __future__ import annotations

import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from tests.support.browser import DESKTOP_CHROME, launch

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk"
CORE = ROOT / "src" / "sightline" / "web" / "static" / "sdk" / "analytics.js"
BUDGET = 3072
MARK = (
    b"window.__sdkStart = performance.now();"
    b"document.addEventListener('DOMContentLoaded', () => analytics.start().then(s => {"
    b"  window.__sdkReady = {status: s.events, at: performance.now()}; }));"
)
MEASURE = """() => {
  const [script] = performance.getEntriesByType('resource').filter(e => e.name.endsWith('/analytics.js'));
  const ready = window.__sdkReady;
  return {status: ready.status, start: window.__sdkStart, ready: ready.at, fetchStart: script.startTime};
}"""


def core_size() -> tuple[int, int]:
    if not CORE.exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=SDK, check=True)
        subprocess.run(["npm", "run", "--silent", "build"], cwd=SDK, check=True)
    data = CORE.read_bytes()
    return len(data), len(gzip.compress(data, compresslevel=9, mtime=0))


class Shop:
    """The customer's page on its own origin; ``/mark.js`` notes when the deferred scripts start."""

    def __init__(self) -> None:
        self.html = b""
        shop = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/mark.js":
                    body, kind = MARK, "text/javascript"
                elif self.path == "/":
                    body, kind = shop.html, "text/html; charset=utf-8"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def time_to_ready(runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    from sightline.accounts.users import create_user
    from sightline.database import open_database
    from sightline.sites.service import create_site

    work = Path(tempfile.mkdtemp(prefix="sightline-bench-sdk-"))
    shop = Shop()
    db = open_database(f"sqlite:///{work / 'data' / 'sightline.db'}")
    with db.begin() as conn:
        owner = create_user(conn, "bench@example.com", "correct horse battery staple")
        key = create_site(conn, owner["id"], "Bench", f"127.0.0.1:{shop.port}")["key"]
    db.dispose()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    shop.html = (
        "<!doctype html><html><head><title>Bench</title>"
        '<script defer src="/mark.js"></script>'
        f'<script defer src="{base}/analytics.js" data-site="{key}"></script>'
        "</head><body>bench</body></html>"
    ).encode()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    command = [sys.executable, "-m", "sightline.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(work / "data"), "--log-level", "warning"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120  # a loaded machine starts a server slowly
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("sightline serve did not start")
            time.sleep(0.1)
        to_ready: list[float] = []
        fetch_to_ready: list[float] = []
        with sync_playwright() as pw:
            browser = launch(pw)
            for run in range(runs + 2):  # two warm-up runs: the server's first requests open connections
                context = browser.new_context(user_agent=DESKTOP_CHROME)
                page = context.new_page()
                page.goto(f"http://127.0.0.1:{shop.port}/")
                page.wait_for_function("() => window.__sdkReady !== undefined")
                result = page.evaluate(MEASURE)
                context.close()
                if result["status"] != "ready":
                    raise RuntimeError(f"the SDK did not become ready: {result}")
                if run >= 2:
                    to_ready.append(result["ready"] - result["start"])
                    fetch_to_ready.append(result["ready"] - result["fetchStart"])
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
        shop.server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    return {
        "start_to_ready_ms": statistics.median(to_ready),
        "start_to_ready_p90_ms": statistics.quantiles(to_ready, n=10)[-1],
        "fetch_to_ready_ms": statistics.median(fetch_to_ready),
    }


def main() -> int:
    raw, gz9 = core_size()
    print(f"analytics.js: {raw} bytes minified, {gz9} bytes gzipped (budget {BUDGET})")
    runs = int(os.environ.get("BENCH_SDK_RUNS", "30"))
    timing = time_to_ready(runs)
    print(
        f"script start -> ready: median {timing['start_to_ready_ms']:.1f} ms, "
        f"p90 {timing['start_to_ready_p90_ms']:.1f} ms over {runs} fresh page loads"
    )
    print(f"analytics.js request start -> ready: median {timing['fetch_to_ready_ms']:.1f} ms")
    return 0 if gz9 <= BUDGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
