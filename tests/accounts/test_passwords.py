"""Password hashing: an unknown account costs one full verification, as a known one does."""

from __future__ import annotations

import time

from sightline.accounts import passwords


def test_the_kept_dummy_hash_has_the_parameters_of_a_new_password_hash() -> None:
    # Otherwise every start makes one (a quarter of a CPU-second) and the kept one is dead weight:
    # make a new one with passwords._hasher.hash(...) after an argon2-cffi upgrade.
    assert not passwords._hasher.check_needs_rehash(passwords._DUMMY_HASH)
    assert passwords._dummy_hash() == passwords._DUMMY_HASH


def test_an_unknown_account_is_refused_after_a_full_verification() -> None:
    real = passwords.hash_password("a real password of someone")
    started = time.process_time()
    assert not passwords.verify_password(real, "a wrong password guess")
    known = time.process_time() - started
    started = time.process_time()
    assert not passwords.verify_password(None, "a wrong password guess")
    unknown = time.process_time() - started
    assert unknown > known / 4, (known, unknown)  # the same work (CPU time: robust to a loaded machine)
