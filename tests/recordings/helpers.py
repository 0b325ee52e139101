"""Helpers of the recording tests: sites that record, chunks as the recorder sends them, stored files."""

from __future__ import annotations

import gzip
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.support.browser import DESKTOP_CHROME
from tests.support.server import LiveServer


@dataclass
class RecordingSite:
    id: int
    key: str
    origin: str


def recording_site(
    owner: httpx.Client, domain: str | None = None, *, enabled: bool = True, sample_rate: float = 1.0
) -> RecordingSite:
    """A new site of ``owner`` (a fresh domain unless given) with recording switched as asked."""
    domain = domain or f"shop-{secrets.token_hex(4)}.example"
    created = owner.post("/api/sites", json={"name": "Shop", "domain": domain})
    assert created.status_code == 201, created.text
    site = created.json()
    changes = {"recording_enabled": enabled, "recording_sample_rate": sample_rate}
    changed = owner.patch(f"/api/sites/{site['id']}", json=changes)
    assert changed.status_code == 200, changed.text
    scheme = "http" if domain.startswith(("127.0.0.1", "localhost")) else "https"
    return RecordingSite(site["id"], site["key"], f"{scheme}://{domain}")


def new_recording_id() -> str:
    return secrets.token_urlsafe(16)


def page_events(
    start: int, *, href: str = "https://shop.example/", text: str = "Hello"
) -> list[dict[str, Any]]:
    """A page load as rrweb records it: Meta, FullSnapshot, then one mouse move."""
    document = {
        "type": 0,
        "id": 1,
        "childNodes": [
            {
                "type": 2,
                "id": 2,
                "tagName": "html",
                "attributes": {},
                "childNodes": [
                    {"type": 2, "id": 3, "tagName": "head", "attributes": {}, "childNodes": []},
                    {
                        "type": 2,
                        "id": 4,
                        "tagName": "body",
                        "attributes": {},
                        "childNodes": [{"type": 3, "id": 5, "textContent": text}],
                    },
                ],
            }
        ],
    }
    return [
        {"type": 4, "timestamp": start, "data": {"href": href, "width": 800, "height": 600}},
        {
            "type": 2,
            "timestamp": start + 5,
            "data": {"node": document, "initialOffset": {"left": 0, "top": 0}},
        },
        {
            "type": 3,
            "timestamp": start + 900,
            "data": {"source": 1, "positions": [{"x": 1, "y": 2, "id": 4, "timeOffset": 0}]},
        },
    ]


def moves(start: int, count: int = 3) -> list[dict[str, Any]]:
    return [
        {
            "type": 3,
            "timestamp": start + i * 100,
            "data": {"source": 1, "positions": [{"x": i, "y": i, "id": 4, "timeOffset": 0}]},
        }
        for i in range(count)
    ]


def chunk(events: list[dict[str, Any]], *, session: str = "visit-1", visitor: str = "visitor-1") -> bytes:
    return gzip.compress(orjson.dumps({"session_id": session, "visitor_id": visitor, "events": events}))


def post_chunk(
    server: LiveServer,
    site: RecordingSite,
    recording_id: str,
    seq: int | str,
    body: bytes,
    origin: str | None = None,
) -> httpx.Response:
    """POST the chunk as the recorder does: from the site's origin, no Content-Type, no cookies."""
    url = f"{server.base_url}/i/recordings/{recording_id}/chunks"
    headers = {"Origin": origin if origin is not None else site.origin, "User-Agent": DESKTOP_CHROME}
    return httpx.post(
        url, params={"key": site.key, "seq": str(seq)}, content=body, headers=headers, timeout=30
    )


def stored_chunk_files(data_dir: Path, recording_id: str | None = None) -> list[Path]:
    """The chunk files under the data dir, of one recording or of all."""
    root = data_dir / "recordings"
    files = sorted(root.rglob("*.json.gz")) if root.exists() else []
    return [p for p in files if recording_id is None or p.parent.name == recording_id]


def stored_texts(data_dir: Path, recording_id: str | None = None) -> Iterator[str]:
    """Every stored chunk (of one recording or of all), decompressed."""
    for path in stored_chunk_files(data_dir, recording_id):
        yield gzip.decompress(path.read_bytes()).decode("utf-8")
