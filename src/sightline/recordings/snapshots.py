"""A page as the recordings show it: the newest recorded full snapshot of one path of a site, for
the console's click heatmap (docs/reports.md, "Click heatmaps").

A recording holds, for each page loaded during the visit, the recorder's ``meta`` event (the
page's address and window size) followed by a full snapshot of its DOM, masked as the recorder
masks everything (text and inputs, ``data-sl-block``). ``find`` looks for the newest such pair
whose address has the asked path: first in the recordings that began on that page (the index
knows each recording's entry page), then in other recent recordings of several pages. It prefers
a snapshot taken in a window of the asked width class, and answers another width's when no
recording of the class is found. The work is bounded: at most ``MAX_RECORDINGS`` recordings and
``MAX_CHUNKS`` chunks are read, one chunk in memory at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import msgspec
import orjson
from sqlalchemy import Connection, select

from sightline.database.tables.recordings import recordings
from sightline.errors import ApiError
from sightline.recordings.chunks import FULL_SNAPSHOT, META, events_json
from sightline.recordings.service import Recordings
from sightline.recordings.store import ChunkMissingError

log = logging.getLogger("sightline.recordings")

MAX_RECORDINGS = 20  # recordings looked into for one answer
MAX_CHUNKS = 60  # chunks read for one answer
OTHERS = 8  # of which recordings that began on another page


def width_class(width: int) -> str:
    """The heatmap's width class of a window ``width`` px wide (reports.heatmaps.VIEWPORTS)."""
    return "phone" if width < 576 else "tablet" if width < 992 else "desktop"


@dataclass(frozen=True)
class Snapshot:
    recording_id: str
    started_at: str
    width: int
    height: int
    events: list[Any]  # the meta event and the full snapshot, as the recorder sent them

    @property
    def viewport(self) -> str:
        return width_class(self.width)

    def public(self) -> dict[str, Any]:
        return {
            "recording_id": self.recording_id,
            "recorded_at": self.started_at,
            "width": self.width,
            "height": self.height,
            "viewport": self.viewport,
            "events": self.events,
        }


def _path(href: object) -> str | None:
    if not isinstance(href, str):
        return None
    try:
        return urlsplit(href).path or "/"
    except ValueError:
        return None


def _candidates(conn: Connection, site_id: int, path: str) -> list[Any]:
    """Recordings that began on ``path`` (newest first), then recent ones of several pages."""
    columns = (recordings.c.id, recordings.c.started_at)
    mine = recordings.c.site_id == site_id, recordings.c.has_snapshot.is_(True)
    newest = recordings.c.started_at.desc(), recordings.c.id.desc()
    began = conn.execute(
        select(*columns)
        .where(*mine, recordings.c.entry_page == path)
        .order_by(*newest)
        .limit(MAX_RECORDINGS - OTHERS)
    ).all()
    others = conn.execute(
        select(*columns)
        .where(*mine, recordings.c.pages > 1, recordings.c.entry_page != path)
        .order_by(*newest)
        .limit(OTHERS)
    ).all()
    return [*began, *others]


class _Budget:
    def __init__(self) -> None:
        self.chunks = MAX_CHUNKS

    def take(self) -> bool:
        self.chunks -= 1
        return self.chunks >= 0


def _snapshots(
    service: Recordings, recording: Any, seqs: list[int], path: str, budget: _Budget
) -> Iterator[Snapshot]:
    """The full snapshots of ``path`` in one recording, in order, the first of each width class
    (chunks are read as the caller asks for the next one)."""
    meta: dict[str, Any] | None = None
    classes: set[str] = set()
    for seq in seqs:
        if not budget.take():
            break
        try:
            body = events_json(service.store.get(recording.id, seq))
            events = orjson.loads(b"[" + body + b"]")
        except (ChunkMissingError, ApiError, msgspec.MsgspecError, orjson.JSONDecodeError, RecursionError):
            log.warning("chunk %s/%s is missing or unreadable; the heatmap skips it", recording.id, seq)
            meta = None
            continue
        for event in events:
            kind = event.get("type") if isinstance(event, dict) else None
            data = event.get("data") if isinstance(event, dict) else None
            if kind == META and isinstance(data, dict):
                meta = event if _path(data.get("href")) == path else None
            elif kind == FULL_SNAPSHOT and meta is not None:
                width, height = meta["data"].get("width"), meta["data"].get("height")
                if isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0:
                    snapshot = Snapshot(
                        recording.id, recording.started_at.isoformat(), width, height, [meta, event]
                    )
                    if snapshot.viewport not in classes:
                        classes.add(snapshot.viewport)
                        yield snapshot
                meta = None
            elif kind == FULL_SNAPSHOT:
                meta = None


def find(
    conn: Connection, service: Recordings, site_id: int, path: str, viewport: str | None
) -> Snapshot | None:
    """The newest recorded full snapshot of ``path``, of the width class ``viewport`` if one is
    found, else of another width."""
    budget = _Budget()
    fallback: Snapshot | None = None
    for recording in _candidates(conn, site_id, path):
        if budget.chunks <= 0:
            break
        seqs = service.chunk_seqs(conn, recording.id)
        for snapshot in _snapshots(service, recording, seqs, path, budget):
            if viewport is None or snapshot.viewport == viewport:
                return snapshot
            fallback = fallback or snapshot
    return fallback
