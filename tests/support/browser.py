"""Headless Chromium as every browser test and benchmark launches it, and the front-end builds they load.

Debian's Chromium, driven by Playwright; the flags keep it off the (absent) network. Pages are
watched: a page error or an unhandled rejection fails the test that caused it.
"""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright

from tests.support import waits

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "sightline" / "web" / "static"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]
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
