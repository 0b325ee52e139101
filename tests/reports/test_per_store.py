"""Kept figures belong to one store: each store client gets its own keeper, the same one each time,
and it goes when the client goes (a server stopped in a test process frees what it kept)."""

from __future__ import annotations

import gc
import weakref

from sightline.reports.per_store import PerStore


class _Store:
    pass


class _Kept:
    pass


def test_each_store_has_one_keeper_of_its_own_which_goes_with_it() -> None:
    keeper = PerStore(_Kept)
    first, second = _Store(), _Store()
    kept = keeper(first)
    assert keeper(first) is kept
    assert keeper(second) is not kept
    gone = weakref.ref(kept)
    del first, kept
    gc.collect()
    assert gone() is None
