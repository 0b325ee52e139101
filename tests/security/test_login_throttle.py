"""The login throttle counts an attempt before the slow password check, atomically with the limit."""

from __future__ import annotations

import threading

from sightline.accounts.throttle import LoginThrottle


def test_sixty_concurrent_guesses_at_one_account_get_exactly_the_limit() -> None:
    throttle = LoginThrottle(per_account=5, per_ip=1000, window_seconds=900)
    start = threading.Barrier(60)
    allowed: list[int] = []

    def guess(n: int) -> None:
        start.wait()
        if throttle.attempt("owner@example.com", f"198.51.100.{n}") == 0:
            allowed.append(n)

    threads = [threading.Thread(target=guess, args=(n,)) for n in range(60)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == 5
    assert throttle.attempt("owner@example.com", "203.0.113.1") > 0


def test_a_successful_sign_in_takes_its_count_back() -> None:
    throttle = LoginThrottle(per_account=2, per_ip=2, window_seconds=900)
    for _ in range(5):
        assert throttle.attempt("owner@example.com", "192.0.2.1") == 0
        throttle.passed("owner@example.com", "192.0.2.1")
    assert throttle.attempt("a@example.com", "192.0.2.1") == 0
    assert throttle.attempt("b@example.com", "192.0.2.1") == 0
    assert throttle.attempt("c@example.com", "192.0.2.1") > 0  # the address's two failures


def test_password_checks_beyond_the_cap_are_refused_not_queued() -> None:
    throttle = LoginThrottle(per_account=5, per_ip=20, window_seconds=900, concurrent=2)
    assert throttle.verifying.acquire(blocking=False)
    assert throttle.verifying.acquire(blocking=False)
    assert not throttle.verifying.acquire(blocking=False)
    throttle.verifying.release()
    assert throttle.verifying.acquire(blocking=False)
