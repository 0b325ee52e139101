"""Helpers of the browser SDK tests: the created site, the stored events, waiting, and page actions."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from playwright.sync_api import Page
from sqlalchemy import text

from sightline.database import Database
from tests.support.browser import SCRIPTS_RUN


@dataclass
class Site:
    id: int
    key: str
    base_url: str
    owner: httpx.Client

    def change(self, **changes: object) -> None:
        response = self.owner.patch(f"/api/sites/{self.id}", json=changes)
        assert response.status_code == 200, response.text


@dataclass
class StoredEvent:
    name: str
    visitor_id: str
    session_id: str
    path: str
    props: dict[str, Any]
    batch_id: str
    referrer: str | None = None
    language: str | None = None


class Store:
    """What the server committed, read straight from its database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def events(self, site: Site) -> list[StoredEvent]:
        query = text(
            "SELECT name, visitor_id, session_id, path, props, batch_id, referrer, language FROM events "
            "WHERE site_id = :site ORDER BY id"
        )
        with self.db.read() as conn:
            rows = conn.execute(query, {"site": site.id}).all()
        return [
            StoredEvent(
                r.name,
                r.visitor_id,
                r.session_id,
                r.path,
                json.loads(r.props or "{}"),
                r.batch_id,
                r.referrer,
                r.language,
            )
            for r in rows
        ]


@dataclass
class Stored:
    """The events stored for the test's site, read while the test's page keeps running."""

    store: Store
    site: Site
    page: Page

    def all(self) -> list[StoredEvent]:
        return self.store.events(self.site)

    def wait(self, count: int, timeout: float = 20) -> list[StoredEvent]:
        """The events once there are ``count`` of them; fails when more arrive or time runs out."""
        found: list[StoredEvent] = []

        def enough() -> bool:
            nonlocal found
            found = self.all()
            return len(found) >= count

        wait_until(self.page, enough, timeout, lambda: f"{len(found)} events stored, expected {count}")
        assert len(found) == count, [e.name for e in found]
        return found


def named(stored: Stored, name: str, count: int = 1, timeout: float = 20) -> list[StoredEvent]:
    """The stored events called ``name`` once there are ``count`` of them; fails when more arrive."""
    found: list[StoredEvent] = []

    def enough() -> bool:
        nonlocal found
        found = [e for e in stored.all() if e.name == name]
        return len(found) >= count

    def why() -> str:
        return f"{len(found)} {name} events stored, expected {count}: {[e.props for e in found]}"

    wait_until(stored.page, enough, timeout, why)
    assert len(found) == count, [e.props for e in found]
    return found


def wait_until(
    page: Page, condition: Callable[[], bool], timeout: float = 20, why: Callable[[], str] = str
) -> None:
    """Poll ``condition`` while the page runs (request and route handlers fire only in Playwright calls)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out: {why()}")
        page.wait_for_timeout(100)


def open_page(page: Page, url: str, ready: bool = True) -> None:
    """Load ``url`` and wait for ``window.analytics`` (and, with ``ready``, for the events connection)."""
    page.add_init_script(SCRIPTS_RUN)
    page.goto(url)
    page.wait_for_function("() => window.analytics !== undefined")
    if ready:
        page.wait_for_function("() => analytics.status().events === 'ready'", timeout=15000)


def hide_page(page: Page) -> None:
    """The tab goes to the background: visibilityState becomes hidden and visibilitychange fires."""
    page.evaluate(
        "() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange')); }"
    )
