"""Helpers of the ingest tests: sites, a browser-like sender, batches, and reading what was stored."""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
import psycopg
from sqlalchemy import Row, select

from sightline.database import Database
from sightline.database.schema import events
from tests.support.http import TLS
from tests.support.server import LiveServer

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Mobile/15E148 Safari/604.1"
)
SCRIPT_TEXT = "/* Sightline test SDK */\n" + "window.analytics = window.analytics || {};\n" * 40


@dataclass
class Site:
    id: int
    key: str
    domain: str
    owner: httpx.Client

    @property
    def origin(self) -> str:
        return f"http://{self.domain}"

    @classmethod
    def create(cls, owner: httpx.Client, domain: str) -> Site:
        response = owner.post("/api/sites", json={"name": f"Site {domain}", "domain": domain})
        assert response.status_code == 201, response.text
        body = response.json()
        return cls(body["id"], body["key"], body["domain"], owner)

    def record(self) -> dict[str, Any]:
        """The site as the console lists it."""
        sites = self.owner.get("/api/sites").json()["sites"]
        found: dict[str, Any] = next(s for s in sites if s["id"] == self.id)
        return found

    def change(self, **changes: object) -> None:
        response = self.owner.patch(f"/api/sites/{self.id}", json=changes)
        assert response.status_code == 200, response.text


def batch_id() -> str:
    return secrets.token_urlsafe(18)


def event(name: str = "pageview", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": name,
        "ts": int(time.time() * 1000),
        "visitor_id": "v-" + "a" * 20,
        "session_id": "s-" + "b" * 20,
        "url": "http://localhost/pricing",
        "path": "/pricing",
        "referrer": "",
        "props": {},
    }
    base.update(fields)
    return base


def batch(site: Site, *evts: dict[str, Any], bid: str | None = None) -> dict[str, Any]:
    return {"key": site.key, "batch_id": bid or batch_id(), "events": list(evts) or [event()]}


class Visitor:
    """Sends what the SDK sends: JSON as text/plain from the site's origin with a browser's user agent."""

    def __init__(self, base_url: str, site: Site, user_agent: str = CHROME) -> None:
        self.site = site
        self.client = httpx.Client(
            verify=TLS,
            base_url=base_url,
            timeout=30,
            headers={"Origin": site.origin, "User-Agent": user_agent},
        )

    def __enter__(self) -> Visitor:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.client.close()

    def send(self, body: dict[str, Any] | bytes | str, **headers: str) -> httpx.Response:
        if isinstance(body, dict):
            import orjson

            content: bytes | str = orjson.dumps(body)
        else:
            content = body
        sent = {"Content-Type": "text/plain;charset=UTF-8", **headers}
        return self.client.post("/i/events", content=content, headers=sent)

    def config(self, **headers: str) -> httpx.Response:
        return self.client.get("/i/config", params={"key": self.site.key}, headers=headers)


def stored(db: Database, site: Site) -> list[Row[Any]]:
    with db.read() as conn:
        return list(conn.execute(select(events).where(events.c.site_id == site.id).order_by(events.c.id)))


def dropped(owner: httpx.Client) -> dict[str, int]:
    figures: dict[str, int] = owner.get("/api/health").json()["services"]["ingest"]["dropped"]
    return figures


def wait_until(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@contextmanager
def writes_blocked(server: LiveServer, table: str) -> Iterator[None]:
    """Hold a lock that stops the server's writer at its first INSERT into ``table``."""
    url = server.database_url or ""
    if url.startswith("sqlite"):
        lock = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        return
    with psycopg.connect(url) as conn:
        conn.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE")
        yield
        conn.rollback()
