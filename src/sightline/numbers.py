"""The one way Sightline reads a whole number from request text (headers, paths, query strings).

``str.isdigit()`` accepts ``²``, ``①`` and other characters that ``int()`` refuses, and ``int()``
accepts Arabic-Indic digits, ``_`` separators and surrounding spaces; a parameter checked with one
and converted with the other answers 500. ``ascii_int`` accepts only ASCII digits, a bounded
length and a range, and returns ``None`` for anything else, so each caller answers its own 4xx.
Imports nothing from the rest of Sightline.
"""

from __future__ import annotations

from typing import TypeGuard

MAX_DIGITS = 19  # every value below 2**63 fits
MAX_ID = 2**62  # the largest id an object may have (every database stores it; none is given past it)


def ascii_int(text: str | bytes | None, minimum: int = 0, maximum: int | None = None) -> int | None:
    """``text`` as an int when it is 1-19 ASCII digits within ``minimum..maximum``, else ``None``."""
    if text is None or not 0 < len(text) <= MAX_DIGITS or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    if value < minimum or (maximum is not None and value > maximum):
        return None
    return value


def is_id(value: object) -> TypeGuard[int]:
    """Whether a JSON body's ``value`` can name an object: a whole number (not a bool) in
    ``1..MAX_ID``. A larger one names none, and would overflow the database's integers."""
    return type(value) is int and 1 <= value <= MAX_ID


def port_number(text: str | bytes | None) -> int | None:
    """A TCP port written after a host (``1..65535``), else ``None``."""
    return ascii_int(text, 1, 65535)
