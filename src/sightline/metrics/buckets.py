"""Latency histograms kept as plain counts, cheap enough for the hot path (one bisect per sample).

The exposition (``collectors.py``) turns them into Prometheus histograms at scrape time, so the
code that times things needs no metrics library and takes no lock. Imports nothing from Sightline.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

# Upper bounds in seconds (Prometheus' ``le``); +Inf is implicit.
HTTP_BOUNDS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip
COMMIT_BOUNDS: tuple[float, ...] = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
)  # fmt: skip


class LatencyBuckets:
    """Counts of samples per bucket (not cumulative) and their sum, in seconds."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> Iterator[tuple[str, int]]:
        """(``le``, samples at or below it), ending with ``+Inf``: Prometheus' histogram buckets."""
        running = 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            yield ("+Inf" if bound == float("inf") else repr(bound)), running
