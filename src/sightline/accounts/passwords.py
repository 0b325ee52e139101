"""Argon2id password hashing, with a dummy verification so unknown e-mails cost the same time."""

from __future__ import annotations

import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_hasher = PasswordHasher()  # argon2-cffi's defaults are Argon2id with RFC 9106 low-memory parameters


# A hash of a password nobody has, made with the hasher's parameters: verifying against it costs
# what verifying a real account's hash does. Kept here rather than made at every start, which took
# a quarter of a CPU-second off each server start.
_DUMMY_HASH = (
    "$argon2id$v=19$m=65536,t=3,p=4$IzILfV4uToD45CmBoy4LxQ$wEqcgb6ew57T+4pRg/qo1lhA7niz6oeKzSnU4S9U2M4"
)


@functools.cache
def _dummy_hash() -> str:
    """The hash an unknown account is checked against: the kept one, or, when the hasher's
    parameters differ from those it was made with (an upgraded argon2-cffi), one made now, by
    ``prepare`` when the server starts."""
    if _hasher.check_needs_rehash(_DUMMY_HASH):
        return _hasher.hash("sightline-dummy-password-for-constant-time")
    return _DUMMY_HASH


def prepare() -> None:
    """Makes the dummy hash now, so the first unknown e-mail costs what every later one does."""
    _dummy_hash()


MIN_LENGTH = 10
MAX_LENGTH = 1024


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches; an absent hash still costs one full verification."""
    try:
        return _hasher.verify(password_hash or _dummy_hash(), password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)


def password_problem(password: str) -> str | None:
    """Why a new password is refused, or None when it is acceptable."""
    if len(password) < MIN_LENGTH:
        return f"The password needs at least {MIN_LENGTH} characters."
    if len(password) > MAX_LENGTH:
        return f"The password may have at most {MAX_LENGTH} characters."
    return None
