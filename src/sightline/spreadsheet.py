"""Cells of CSV files that owners open in a spreadsheet: no cell may run as a formula.

A spreadsheet treats a cell starting with ``=``, ``+``, ``-`` or ``@`` (and, in some programs, a
tab or a line break) as a formula, also after invisible or blank characters such as a byte-order
mark (U+FEFF), a no-break space or a zero-width space. ``safe_cell`` puts a ``'`` in front of such a
value (OWASP's advice), so it shows as text. Every CSV export uses it. Imports nothing else.
"""

from __future__ import annotations

import unicodedata

FORMULA_STARTS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")  # and their full-width forms
BLANK_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


def _blank(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) in BLANK_CATEGORIES


def needs_quote(value: str) -> bool:
    """Whether a spreadsheet could read ``value`` as a formula."""
    for char in value:
        if char in "\t\r\n":
            return True
        if not _blank(char):
            return char in FORMULA_STARTS
    return False


def safe_cell(value: str) -> str:
    """``value`` as a CSV cell that a spreadsheet shows as text."""
    return "'" + value if needs_quote(value) else value
