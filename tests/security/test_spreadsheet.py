"""CSV cells never run as formulas, even behind invisible or blank characters."""

from __future__ import annotations

import pytest

from sightline.spreadsheet import safe_cell
from sightline.surveys.export import escape_cell

HIDDEN_STARTS = [
    "\ufeff",
    "\u00a0",
    "\u200b",
    "\u2007",
    "\u3000",
    " ",
    "\x0b",
    "\x00",
    "\u2028",
    "\ufeff\u00a0 ",
]


@pytest.mark.parametrize("blank", HIDDEN_STARTS)
@pytest.mark.parametrize("formula", ['=HYPERLINK("http://x")', "+1", "-1+1", "@SUM(A1)", "\uff1d1+1"])
def test_a_formula_behind_blank_or_invisible_characters_is_escaped(blank: str, formula: str) -> None:
    assert safe_cell(blank + formula) == "'" + blank + formula
    assert escape_cell(blank + formula) == "'" + blank + formula


@pytest.mark.parametrize("text", ["plain", " plain", "\ufeffplain", "x=1", "", "   ", "'=1", "1-2"])
def test_text_that_is_no_formula_is_left_alone(text: str) -> None:
    assert safe_cell(text) == text


@pytest.mark.parametrize("text", ["\tx", "\rx", "\nx", " \tx"])
def test_cells_starting_with_a_tab_or_line_break_are_escaped(text: str) -> None:
    assert safe_cell(text) == "'" + text
