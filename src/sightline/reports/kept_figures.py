"""Figures kept between requests: one layer for every report that keeps any, dropped by the
store's own record of what each write changed (``store.changes``), never by a rule of its own.

A kept figure is keyed by its site, its span of time (``[low, high)``, UTC microseconds, as the
store keeps times) and its shape (what was asked: a series span's visitor count and bitmap size,
a goal's rule, a table's column and filters). What it holds must be a function of the site's
events in the span and of the visits that started in it, and nothing else: that is what the
store's change records name (a fed batch records the hours of its events and of its visits'
starts, old and new; an erasure those of the visitor's events and visits; a retention cut
everything before it; a deleted site, a rebuild, everything).

Before a report reads or keeps figures of a site it calls ``sync``: one request to the store
process, which answers what changed of the site after the oldest change number the site's kept
figures were read at. A kept figure whose span a later change touched is dropped; the others take
the answer's number as theirs. A figure read afterwards is kept with the number ``sync`` answered
(``Seen``): any write that committed after it is numbered above it, so the next ``sync`` drops the
figure if that write touched its span, whether or not its read saw the write. A store process
that started again (a restart, a rebuild from the command line, a restored backup) answers another
``epoch``: everything kept goes.

A store without change records (``changes``: a report service that keeps nothing) gets no layer
(``kept_of`` answers None); the store process records changes on both engines, and each report
says which engine it keeps figures on. It lives in the server's memory, at most the store's
``kept_bytes`` (``--reports-kept-mb``, by default an eighth of the usable memory from 128 MiB to
1 GiB: ``store.client.kept_room``; ``MOST_BYTES`` for a store that names none) for all sites of a
store, the least recently used going first.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

MOST_BYTES = 320 << 20  # every kept figure of a store naming no room (an estimate of their size)
Key = tuple[int, int, int, Hashable]  # site, span start, span end (µs), shape
Changes = Callable[[int, int], dict[str, Any]]  # a store's ``changes(site, after)``
ManyChanges = Callable[[Sequence[tuple[int, int]]], list[dict[str, Any]]]  # ``changes_many``
NOTHING_BEFORE = 2**62  # ``after`` when nothing is kept: only the latest number is wanted


@dataclass(frozen=True)
class Seen:
    """A site as ``sync`` saw it: the store process's epoch and latest change number, the store's
    watermark at that change, and the site's latest change that deleted or replaced rows."""

    epoch: str
    number: int
    watermark: int
    removed: int


@dataclass
class _Entry:
    basis: int  # the change number the figure is known to be current at
    value: Any
    cost: int


class Kept:
    """The kept figures of one store's sites."""

    def __init__(
        self, changes: Changes, most_bytes: int = MOST_BYTES, many: ManyChanges | None = None
    ) -> None:
        self._changes = changes
        self._many = many
        self.most_bytes = most_bytes
        self._lock = threading.Lock()
        self._kept: OrderedDict[Key, _Entry] = OrderedDict()
        self._of_site: dict[int, set[Key]] = {}  # each site's keys (a sync reads its site's only)
        self._bytes = 0
        self._epoch: str | None = None

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def used(self) -> int:
        """The estimated bytes of every figure kept now."""
        return self._bytes

    def sync(self, site_id: int) -> Seen:
        """Drops the site's figures a write touched since they were read; the site as seen now."""
        after = self._after(site_id)
        return self._apply(site_id, after, self._changes(site_id, after))

    def sync_many(self, site_ids: Sequence[int]) -> dict[int, Seen]:
        """``sync`` of each site, in one request to the store when it answers several at once."""
        if self._many is None:
            return {site_id: self.sync(site_id) for site_id in site_ids}
        asked = [(site_id, self._after(site_id)) for site_id in dict.fromkeys(site_ids)]
        found = self._many(asked)
        return {
            site_id: self._apply(site_id, after, got)
            for (site_id, after), got in zip(asked, found, strict=True)
        }

    def _after(self, site_id: int) -> int:
        with self._lock:
            bases = [self._kept[key].basis for key in self._of_site.get(site_id, ())]
        return min(bases, default=NOTHING_BEFORE)

    def _apply(self, site_id: int, after: int, found: dict[str, Any]) -> Seen:
        seen = Seen(str(found["epoch"]), int(found["number"]), int(found["watermark"]), int(found["removed"]))
        spans = [(int(n), int(low), int(high)) for n, low, high in found["spans"]]
        with self._lock:
            if seen.epoch != self._epoch:
                self._epoch = seen.epoch
                self._kept.clear()
                self._of_site.clear()
                self._bytes = 0
                return seen
            for key in list(self._of_site.get(site_id, ())):
                entry = self._kept[key]
                if entry.basis < after:  # kept meanwhile, read before the number asked after:
                    continue  # the answer does not cover it; the next sync asks from its number
                touched = spans and any(
                    n > entry.basis and low < key[2] and high > key[1] for n, low, high in spans
                )
                if found["everything"] or touched:
                    self._forget(key)
                else:
                    entry.basis = max(entry.basis, seen.number)
        return seen

    def get(self, key: Key, seen: Seen) -> Any:
        """The kept value of ``key`` as current as ``seen`` (what ``sync`` answered), or None."""
        with self._lock:
            entry = self._kept.get(key)
            if entry is None or entry.basis < seen.number or seen.epoch != self._epoch:
                return None
            self._kept.move_to_end(key)
            return entry.value

    def put(
        self, key: Key, value: Any, seen: Seen, cost: int, keeps: Callable[[Any], bool] | None = None
    ) -> None:
        """Keeps ``value``, read after ``sync`` answered ``seen`` (about ``cost`` bytes), unless
        the value kept already ``keeps`` its place (``keeps(old)``)."""
        with self._lock:
            if seen.epoch != self._epoch or cost > self.most_bytes:
                return
            old = self._kept.get(key)
            if old is not None:
                if keeps is not None and keeps(old.value):
                    return
                self._forget(key)
            self._kept[key] = _Entry(seen.number, value, cost)
            self._of_site.setdefault(key[0], set()).add(key)
            self._bytes += cost
            while self._bytes > self.most_bytes and self._kept:
                self._forget(next(iter(self._kept)))

    def _forget(self, key: Key) -> None:
        self._bytes -= self._kept.pop(key).cost
        keys = self._of_site.get(key[0])
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._of_site[key[0]]


_layers: weakref.WeakKeyDictionary[object, Kept] = weakref.WeakKeyDictionary()
_layers_lock = threading.Lock()


def kept_of(store: object) -> Kept | None:
    """The one layer of ``store`` (one per running server), or None when it answers no changes
    (an engine read directly has its record of changes, not the store process's answer)."""
    if not callable(getattr(store, "changes", None)):
        return None
    owner = weakref.ref(store)  # the layer must not keep its store alive

    def changes(site_id: int, after: int) -> dict[str, Any]:
        found = owner()
        if found is None:
            raise RuntimeError("the store of these kept figures is gone")
        answer: dict[str, Any] = found.changes(site_id, after)  # type: ignore[attr-defined]
        return answer

    def many(asked: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
        found = owner()
        if found is None:
            raise RuntimeError("the store of these kept figures is gone")
        answer: list[dict[str, Any]] = found.changes_many(asked)  # type: ignore[attr-defined]
        return answer

    with _layers_lock:
        kept = _layers.get(store)
        if kept is None:
            several = many if getattr(store, "changes_many", None) is not None else None
            room = int(getattr(store, "kept_bytes", MOST_BYTES))  # --reports-kept-mb
            kept = _layers[store] = Kept(changes, room, several)
        return kept


Made = TypeVar("Made")


class Beside(Generic[Made]):
    """One object per layer, made on first use (a report's ledger that sits beside the layer and
    goes with it): ``Beside(Ledger).of(store)`` is None when the store keeps no figures."""

    def __init__(self, make: Callable[[Kept], Made]) -> None:
        self._make = make
        self._made: weakref.WeakKeyDictionary[Kept, Made] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, store: object) -> Made | None:
        kept = kept_of(store)
        if kept is None:
            return None
        with self._lock:
            made = self._made.get(kept)
            if made is None:
                made = self._made[kept] = self._make(kept)
            return made
