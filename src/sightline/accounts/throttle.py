"""Login throttling: failed attempts counted per account and per client address in a sliding window."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable


class FailureWindow:
    """Counts failures per key over ``window`` seconds.

    A key with ``limit`` failures in the window is blocked until the oldest of them ages out.
    """

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _trim(self, key: str, now: float) -> deque[float] | None:
        entries = self._failures.get(key)
        if entries is None:
            return None
        while entries and entries[0] <= now - self.window:
            entries.popleft()
        if not entries:
            del self._failures[key]
            return None
        return entries

    def retry_after(self, key: str) -> int:
        """Seconds until ``key`` may try again; 0 when it is not blocked."""
        with self._lock:
            now = self._clock()
            entries = self._trim(key, now)
            if entries is None or len(entries) < self.limit:
                return 0
            return max(1, math.ceil(entries[len(entries) - self.limit] + self.window - now))

    def fail(self, key: str) -> None:
        with self._lock:
            now = self._clock()
            entries = self._trim(key, now)
            if entries is None:
                entries = self._failures[key] = deque()
            entries.append(now)
            if len(self._failures) > 100_000:  # bound memory under a spray of addresses
                for stale in list(self._failures)[:10_000]:
                    self._trim(stale, now + self.window)

    def undo(self, key: str) -> None:
        """Take back the newest entry of ``key`` (an attempt counted before it was known to fail)."""
        with self._lock:
            entries = self._failures.get(key)
            if entries:
                entries.pop()
                if not entries:
                    del self._failures[key]

    def clear(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)


class LoginThrottle:
    """Attempts are counted *before* the (slow) password check, atomically with the limit check,
    so concurrent guesses cannot all pass the check before any is counted; a success takes its
    count back. At most ``concurrent`` Argon2 verifications run at once (``verifying``)."""

    def __init__(self, per_account: int, per_ip: int, window_seconds: float, concurrent: int = 2) -> None:
        self.accounts = FailureWindow(per_account, window_seconds)
        self.addresses = FailureWindow(per_ip, window_seconds)
        self._attempts = threading.Lock()
        self.verifying = threading.BoundedSemaphore(concurrent)

    def attempt(self, email: str, ip: str) -> int:
        """Seconds to wait when blocked (nothing counted); else 0, with the attempt counted."""
        with self._attempts:
            wait = self.retry_after(email, ip)
            if not wait:
                self.accounts.fail(email)
                self.addresses.fail(ip)
            return wait

    def passed(self, email: str, ip: str) -> None:
        """The counted attempt succeeded: the account's failures are cleared, the address's undone."""
        self.accounts.clear(email)
        self.addresses.undo(ip)

    def retry_after(self, email: str, ip: str) -> int:
        return max(self.accounts.retry_after(email), self.addresses.retry_after(ip))

    def failed(self, email: str, ip: str) -> None:
        self.accounts.fail(email)
        self.addresses.fail(ip)

    def succeeded(self, email: str) -> None:
        self.accounts.clear(email)
