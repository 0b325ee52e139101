"""Request limits of the stats API (per API key) and of shared links (per link): a sliding window."""

from __future__ import annotations

import time
from collections.abc import Callable

from sightline.accounts.throttle import FailureWindow
from sightline.errors import ApiError


class RequestLimit:
    """At most ``per_minute`` requests per key in any 60 seconds; the next one is told when to retry."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._window = FailureWindow(per_minute, 60.0, clock)

    def take(self, key: str) -> None:
        """Count one request for ``key``, or raise 429 with Retry-After when it has had its share."""
        wait = self._window.retry_after(key)
        if wait:
            raise ApiError(
                429,
                "rate_limited",
                f"Too many requests; try again in {wait} seconds.",
                headers={"Retry-After": str(wait)},
            )
        self._window.fail(key)
