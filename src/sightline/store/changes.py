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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

HOUR = 3_600_000_000  # microseconds
EVERYTHING = (-(2**62), 2**62)  # a span that covers every time
MOST_HOURS = 20_000  # hours remembered per site (their latest change each)
MOST_SPANS = 64  # wide spans remembered per site
Spans = Mapping[int, Iterable[tuple[int, int]]]  # site -> [low, high) spans changed (µs)


@dataclass
class _Site:
    hours: dict[int, int] = field(default_factory=dict)  # hour -> its latest change's number
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (number, low, high)
    forgotten: int = 0  # every change up to this number is answered as everything
    removed: int = 0  # the latest change that deleted or replaced rows (not only added them)
    latest: int = 0  # the latest change of the site


class Changes:
    """The change records of one store, in the store process's memory."""

    def __init__(self, watermark: int = 0) -> None:
        self.epoch = secrets.token_hex(8)
        self.number = 0
        self.watermark = watermark  # the store's watermark at the latest recorded feed step
        self._everything = 0  # the latest change of every site (a rebuild)
        self._sites: dict[int, _Site] = {}
        self._lock = threading.Lock()

    def record(self, spans: Spans | None, removed: bool = True, watermark: int | None = None) -> int:
        """Records a committed write: ``spans`` it changed per site (None: every site, all of
        it); ``removed``: it deleted or replaced rows (a fed batch only adds). Its number."""
        with self._lock:
            self.number += 1
            number = self.number
            if watermark is not None:
                self.watermark = watermark
            if spans is None:
                self._everything = number
                self.watermark = watermark or 0  # a store emptied (or read again from the start)
                self._sites.clear()
                return number
            for site_id, changed in spans.items():
                site = self._sites.setdefault(int(site_id), _Site())
                site.latest = number
                if removed:
                    site.removed = number
                for low, high in changed:
                    self._add(site, number, int(low), int(high))
            return number

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

    def forget_site(self, site_id: int) -> int:
        """Everything of one site changed (a deleted site's rows left the store)."""
        return self.record({site_id: [EVERYTHING]})


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
