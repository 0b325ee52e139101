"""Headless Chromium as every browser test and benchmark launches it, and the front-end builds they load.

Debian's Chromium, driven by Playwright; the flags keep it off the (absent) network. Pages are
watched: a page error or an unhandled rejection fails the test that caused it. A test process keeps
one Chromium (``kept_chromium``) while its modules in a row use a browser; each test browses in
contexts of its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from playwright.sync_api import Browser, Error, Page, Playwright, sync_playwright

from tests.support import waits

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "sightline" / "web" / "static"
CHROMIUM = "/usr/bin/chromium"
# Chromium takes the last --disable-features only, so this list repeats Playwright's own (its
# chromiumSwitches.ts, 1.65) before ours. Ours: each new window of Chromium's headless mode (one per
# browser context) preloaded the omnibox's WebUI popups in a renderer of their own (0.8 s of CPU per
# context, two thirds of a context's cost for a blank page), and a spare renderer that our one page
# per context never takes.
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
]
DISABLED_FEATURES = [
    *PLAYWRIGHT_DISABLED_FEATURES,
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "SpareRendererForSitePerProcess",
]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-features=" + ",".join(DISABLED_FEATURES),
]
# Ingest drops headless browsers as bots; tests browse as the desktop Chrome a visitor runs.
DESKTOP_CHROME = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
# What each front-end package builds, and a file whose age tells whether the build is current.
BUILDS = {"sdk": STATIC / "sdk" / "analytics.js", "ui": STATIC / "console" / "app.js"}


def launch(playwright: Playwright) -> Browser:
    """Chromium browsing as desktop Chrome from launch on (contexts set the same user agent)."""
    args = [*CHROMIUM_ARGS, f"--user-agent={DESKTOP_CHROME}"]
    return playwright.chromium.launch(executable_path=CHROMIUM, args=args, timeout=waits.START * 1000)


class _Kept:
    """The Playwright driver and Chromium of this test process, while tests use them."""

    playwright: Playwright | None = None
    browser: Browser | None = None


def kept_chromium() -> Browser:
    """This test process's Chromium, launched at first use (and again if it died), kept while the
    modules that follow use a browser (``close_kept`` in tests/conftest.py): a Playwright driver and
    a Chromium launched per module cost 1.5 s of CPU each time. Tests browse in contexts of their
    own, so nothing of a page (cookies, storage, cache) outlives its test."""
    if _Kept.browser is not None and _Kept.browser.is_connected():
        return _Kept.browser
    if _Kept.playwright is None:
        _Kept.playwright = sync_playwright().start()
    _Kept.browser = launch(_Kept.playwright)
    return _Kept.browser


def close_kept() -> None:
    """Close the kept Chromium and its driver."""
    browser, playwright = _Kept.browser, _Kept.playwright
    _Kept.browser = _Kept.playwright = None
    if browser is not None:
        with suppress(Error):
            browser.close()
    if playwright is not None:
        playwright.stop()


def _newest_source(package: Path) -> float:
    files = [p for p in (package / "src").rglob("*") if p.is_file()]
    files += [p for p in (package / "package-lock.json", package / "build.mjs") if p.exists()]
    return max(p.stat().st_mtime for p in files)


def ensure_built(package: str = "sdk") -> Path:
    """The package's main output, after ``npm run build`` when it is missing or older than a source."""
    output = BUILDS[package]
    source = ROOT / package
    # Parallel test workers share the checkout: one builds while the others wait, then see it current.
    with _build_lock(package):
        if not output.exists() or output.stat().st_mtime < _newest_source(source):
            # As `make assets` does: install when node_modules is missing or older than the lock file
            # (a pull or rebase that changed the packages).
            modules, lock = source / "node_modules", source / "package-lock.json"
            if not modules.is_dir() or (lock.exists() and lock.stat().st_mtime > modules.stat().st_mtime):
                subprocess.run(
                    ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=source, check=True
                )
            subprocess.run(["npm", "run", "--silent", "build"], cwd=source, check=True)
    return output


@contextmanager
def _build_lock(package: str) -> Iterator[None]:
    """An exclusive lock on building ``package`` of this checkout, held across processes."""
    checkout = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"sightline-build-{checkout}-{package}.lock"
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextmanager
def watched(tab: Page, *, rejections: bool = True) -> Iterator[Page]:
    """``tab``, failing the test at the end if it reported page errors or unhandled rejections."""
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    if rejections:
        tab.add_init_script(
            "window.__rejections = [];"
            "addEventListener('unhandledrejection', e => window.__rejections.push(String(e.reason)));"
        )
    yield tab
    rejected = tab.evaluate("window.__rejections || []") if rejections and not tab.is_closed() else []
    assert errors == [], f"page errors: {errors}"
    assert rejected == [], f"unhandled rejections: {rejected}"


# A plugin registers as its script runs, and a script's load event follows its run: the page notes
# the scripts that ran (a listener on the document, which a load event reaches and the window does
# not, set before the page's own scripts).
SCRIPTS_RUN = (
    "if (!window.__scriptsRun) { window.__scriptsRun = [];"
    " document.addEventListener('load', e => { if (e.target instanceof HTMLScriptElement)"
    " window.__scriptsRun.push(e.target.src.split('?')[0].split('/').pop()); }, true); }"
)


def plugins_ran(page: Page, *names: str) -> None:
    """Wait until the plugins ``names`` (``analytics-<name>.js``) have run on the page (loaded after
    ``SCRIPTS_RUN`` was added to it): their listeners are on, so what the test does next is captured."""
    page.wait_for_function(
        "names => names.every(n => (window.__scriptsRun || []).includes(`analytics-${n}.js`))",
        arg=list(names),
        timeout=15000,
    )
