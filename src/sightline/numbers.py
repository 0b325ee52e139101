"""The one way Sightline reads a whole number from request text (headers, paths, query strings).

``str.isdigit()`` accepts ``²``, ``①`` and other characters that ``int()`` refuses, and ``int()``
accepts Arabic-Indic digits, ``_`` separators and surrounding spaces; a parameter checked with one
and converted with the other answers 500. ``ascii_int`` accepts only ASCII digits, a bounded
length and a range, and returns ``None`` for anything else, so each caller answers its own 4xx.
Imports nothing from the rest of Sightline.
"""

from __future__ import annotations

MAX_DIGITS = 19  # every value below 2**63 fits


def ascii_int(text: str | bytes | None, minimum: int = 0, maximum: int | None = None) -> int | None:
    """``text`` as an int when it is 1-19 ASCII digits within ``minimum..maximum``, else ``None``."""
    if text is None or not 0 < len(text) <= MAX_DIGITS or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    if value < minimum or (maximum is not None and value > maximum):
        return None
    return value


def port_number(text: str | bytes | None) -> int | None:
    """A TCP port written after a host (``1..65535``), else ``None``."""
    return ascii_int(text, 1, 65535)
