"""Figures kept between requests belong to one store: ``PerStore`` hands out one keeper per store
client (one per running server), made at first use and gone with the client. ``goal_days``,
``series_days`` and ``realtime`` each keep theirs through it."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerStore(Generic[T]):
    """``keeper(store)``: the one ``T`` of ``store``, made by ``make`` when first asked for."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._kept: weakref.WeakKeyDictionary[object, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __call__(self, store: object) -> T:
        with self._lock:
            kept = self._kept.get(store)
            if kept is None:
                kept = self._kept[store] = self._make()
            return kept
