"""What each write changed in the store, numbered: the one signal every figure kept between
requests is dropped by (``reports.kept_figures``, ``store.kept_selections``).

Every write of the store's data records, once it has committed, which sites it changed and which
spans of time (UTC microseconds, as the store keeps times) of each, under the next change number:

- a **fed batch** (``feed``): per site, the hours of its events, of the starts of the visits it
  touched, and of the starts those visits had before (an earlier event arriving late moves a
  visit's start back, out of the span it began in): what a figure of a span reads is the events
  in the span and the visits that started in it, so a write outside a span changes nothing in it;
- a visitor's **erasure**: the hours of the visitor's events and of the starts of its visits;
- a **retention cut** of a site: everything before the cut;
- a **deleted site**, a **rebuild** (``reset``): everything of the site, or of every site;
- the **self-check's refill** (``check``): the span it read the day's visits again from.

The log's trim deletes from the log only (the store keeps what it holds) and records nothing.
Rewriting spans in site order (``ordering``) changes no row's content and records nothing.

A fed batch also records, per site, the keys (``session``) of the visits it touched, created or
changed, with the earliest start they have now (``touched_of``): the batch wrote the rows of those
visits and events of those visits, and nothing else of the site's visits or events. So the rows of
any other visit are as they were, and a selection of visits kept between requests is brought up
to date by selecting again those visits alone (``touched(site, after)``: the keys of every change
of the site after ``after``, or None when any of those changes carried none: an erasure, a
retention cut, the self-check's refill, a deleted site, a rebuild, a batch of more than
``STEP_KEYS`` visits of the site, or keys forgotten). At most ``MOST_KEYS`` keys are remembered
in all (8 bytes each), the oldest record's forgotten first; ``touched`` answers at most
``STEP_KEYS`` keys (more: None, the spans are cheaper to select again).

``since(site, after)`` answers what changed of a site after change ``after``: the spans with the
number of their latest change, or ``everything`` (the site's all changed, or more changes than
are remembered: at most ``MOST_HOURS`` hours and ``MOST_SPANS`` wide spans per site, the oldest
forgotten first). ``epoch`` is new at each start of the process (numbers start again at 0): a
reader holding numbers of another epoch drops what it kept. Nothing here depends on the order of
log positions or on how far back a late event or a visit may reach: a change is recorded where it
happened, whatever its age.
"""

from __future__ import annotations

import secrets
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # the server imports this module for its names: NumPy and Arrow only where used
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

HOUR = 3_600_000_000  # microseconds
EVERYTHING = (-(2**62), 2**62)  # a span that covers every time
MOST_HOURS = 20_000  # hours remembered per site (their latest change each)
MOST_SPANS = 64  # wide spans remembered per site
MOST_KEYS = 1_000_000  # visit keys remembered in all (8 MiB), the oldest record's forgotten first
STEP_KEYS = 50_000  # visit keys of one site a record keeps (more: none), and ``touched`` answers
Spans = Mapping[int, Iterable[tuple[int, int]]]  # site -> [low, high) spans changed (µs)
Keys: TypeAlias = "npt.NDArray[np.uint64]"  # visit keys (``session``)
Touched: TypeAlias = "Mapping[int, tuple[Keys, int]]"  # site -> (keys touched, their earliest start)


@dataclass
class _Site:
    hours: dict[int, int] = field(default_factory=dict)  # hour -> its latest change's number
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (number, low, high)
    forgotten: int = 0  # every change up to this number is answered as everything
    removed: int = 0  # the latest change that deleted or replaced rows (not only added them)
    latest: int = 0  # the latest change of the site
    unkeyed: int = 0  # the latest change that recorded no keys of the visits it touched
    keyed: deque[tuple[int, Keys, int]] = field(default_factory=deque)  # (number, keys, earliest start)


class Changes:
    """The change records of one store, in the store process's memory."""

    def __init__(self, watermark: int = 0) -> None:
        self.epoch = secrets.token_hex(8)
        self.number = 0
        self.watermark = watermark  # the store's watermark at the latest recorded feed step
        self._everything = 0  # the latest change of every site (a rebuild)
        self._sites: dict[int, _Site] = {}
        self._keyed: deque[tuple[int, int, int]] = deque()  # (site, number, keys), oldest first
        self.keys = 0  # keys remembered in all
        self._lock = threading.Lock()

    def record(
        self,
        spans: Spans | None,
        removed: bool = True,
        watermark: int | None = None,
        touched: Touched | None = None,
    ) -> int:
        """Records a committed write: ``spans`` it changed per site (None: every site, all of
        it); ``removed``: it deleted or replaced rows (a fed batch only adds); ``touched``: per
        site, the keys of every visit whose row or events it wrote (a site of ``spans`` without
        them: unknown). Its number."""
        with self._lock:
            self.number += 1
            number = self.number
            if watermark is not None:
                self.watermark = watermark
            if spans is None:
                self._everything = number
                self.watermark = watermark or 0  # a store emptied (or read again from the start)
                self._sites.clear()
                self._keyed.clear()
                self.keys = 0
                return number
            for site_id, changed in spans.items():
                site = self._sites.setdefault(int(site_id), _Site())
                site.latest = number
                if removed:
                    site.removed = number
                for low, high in changed:
                    self._add(site, number, int(low), int(high))
                self._remember(int(site_id), site, number, (touched or {}).get(int(site_id)))
            return number

    def _remember(self, site_id: int, site: _Site, number: int, touched: tuple[Keys, int] | None) -> None:
        """Keeps a record's keys of one site (none, or more than ``STEP_KEYS``: the site's
        changes up to it are answered by spans alone), then forgets the oldest beyond ``MOST_KEYS``."""
        if touched is None or len(touched[0]) > STEP_KEYS:
            site.unkeyed = number
            return
        keys, earliest = touched
        if not len(keys):
            return
        site.keyed.append((number, keys, int(earliest)))
        self._keyed.append((site_id, number, len(keys)))
        self.keys += len(keys)
        while self.keys > MOST_KEYS:
            oldest_site, oldest, count = self._keyed.popleft()
            self.keys -= count
            owner = self._sites.get(oldest_site)
            if owner is not None and owner.keyed and owner.keyed[0][0] == oldest:
                owner.keyed.popleft()
                owner.unkeyed = max(owner.unkeyed, oldest)  # changes up to it: spans alone

    def _add(self, site: _Site, number: int, low: int, high: int) -> None:
        if high <= low:
            return
        first, last = low // HOUR, (high - 1) // HOUR
        if last - first < 48:
            for hour in range(first, last + 1):
                site.hours.pop(hour, None)  # re-inserted last: the dict stays in change order
                site.hours[hour] = number
            while len(site.hours) > MOST_HOURS:
                oldest = next(iter(site.hours))
                site.forgotten = max(site.forgotten, site.hours.pop(oldest))
        else:
            site.spans.append((number, low, high))
            if len(site.spans) > MOST_SPANS:
                site.forgotten = max(site.forgotten, site.spans.pop(0)[0])

    def latest(self, site_id: int | None) -> int:
        """The number of the latest change of a site (None: of any site)."""
        with self._lock:
            if site_id is None:
                return self.number
            site = self._sites.get(site_id)
            return max(self._everything, site.latest if site is not None else 0)

    def since(self, site_id: int, after: int) -> dict[str, Any]:
        """What changed of ``site_id`` after change ``after``: ``{"epoch", "number" (the latest
        change), "watermark", "removed" (the site's latest deleting change), "everything": bool,
        "spans": [(number, low, high), ...]}`` (µs, the spans changed after ``after``)."""
        with self._lock:
            site = self._sites.get(site_id)
            out: dict[str, Any] = {
                "epoch": self.epoch,
                "number": self.number,
                "watermark": self.watermark,
                "removed": max(self._everything, site.removed if site else 0),
                "everything": self._everything > after or (site is not None and site.forgotten > after),
                "spans": [],
            }
            if site is None or out["everything"]:
                return out
            spans = [(n, low, high) for n, low, high in site.spans if n > after]
            spans += [(n, h * HOUR, (h + 1) * HOUR) for h, n in site.hours.items() if n > after]
            out["spans"] = spans
            return out

    def touched(self, site_id: int, after: int) -> tuple[Keys, int] | None:
        """The keys of the visits every change of ``site_id`` after change ``after`` touched, and
        the earliest start they have now (no change: no keys); None when a change after it
        recorded none (it may have changed any visit of the spans it recorded), or they are more
        than ``STEP_KEYS``."""
        import numpy as np

        with self._lock:
            site = self._sites.get(site_id)
            if self._everything > after:
                return None
            if site is None:
                return np.empty(0, np.uint64), EVERYTHING[1]
            if site.unkeyed > after or site.forgotten > after:
                return None
            parts = [(keys, earliest) for number, keys, earliest in site.keyed if number > after]
            if sum(len(keys) for keys, _ in parts) > STEP_KEYS:
                return None
            if not parts:
                return np.empty(0, np.uint64), EVERYTHING[1]
            return np.concatenate([keys for keys, _ in parts]), min(earliest for _, earliest in parts)

    def forget_site(self, site_id: int) -> int:
        """Everything of one site changed (a deleted site's rows left the store)."""
        return self.record({site_id: [EVERYTHING]})


def touched_of(visits: pa.Table) -> dict[int, tuple[Keys, int]]:
    """Per site, the keys (``session``) of a fed batch's visit rows and their earliest ``start``."""
    import numpy as np

    if not visits.num_rows:
        return {}
    sites = visits.column("site_id").to_numpy()
    keys = visits.column("session").to_numpy().astype(np.uint64, copy=False)
    starts = visits.column("start").to_numpy()
    out: dict[int, tuple[Keys, int]] = {}
    for site in np.unique(sites):
        chosen = sites == site
        out[int(site)] = (keys[chosen], int(starts[chosen].min()))
    return out


def hours_of(sites: Iterable[int], times: Iterable[int]) -> dict[int, list[tuple[int, int]]]:
    """Per site, the hours (as spans) of ``times`` (pairs of sites and times, in step)."""
    out: dict[int, set[int]] = {}
    for site, moment in zip(sites, times, strict=True):
        if moment is not None:
            out.setdefault(int(site), set()).add(int(moment) // HOUR)
    return {site: [(h * HOUR, (h + 1) * HOUR) for h in sorted(hours)] for site, hours in out.items()}


def merged(*parts: Spans) -> dict[int, list[tuple[int, int]]]:
    """The spans of several records as one record's."""
    out: dict[int, list[tuple[int, int]]] = {}
    for part in parts:
        for site, spans in part.items():
            out.setdefault(int(site), []).extend(spans)
    return out
