"""The one rule for text that must stay on one line (names, e-mail subjects): no control or
line-separating characters.

Python's ``str.splitlines()``, e-mail headers and log lines break at more than CR and LF: at
U+0085, U+2028, U+2029, vertical tab, form feed and the C1 controls too. ``breaks_line`` says
whether a text holds any of them (Unicode categories Cc, Zl, Zp, and lone surrogates), and
``one_line`` replaces each with a space, for text stored before the rule. Imports nothing from
the rest of Sightline.
"""

from __future__ import annotations

import unicodedata

_REFUSED = frozenset({"Cc", "Cs", "Zl", "Zp"})


def _bad(ch: str) -> bool:
    return unicodedata.category(ch) in _REFUSED


def breaks_line(text: str) -> bool:
    """Whether ``text`` holds a control character, a line or paragraph separator."""
    return any(_bad(ch) for ch in text)


def one_line(text: str) -> str:
    """``text`` with each control character and line or paragraph separator made a space."""
    return "".join(" " if _bad(ch) else ch for ch in text) if breaks_line(text) else text
