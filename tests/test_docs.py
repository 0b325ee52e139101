"""The docs name every error code the server can answer with."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ERROR_MAKERS = {"ApiError", "error_response"}


def _codes_in_source() -> dict[str, str]:
    """Every literal error code passed to ApiError or error_response, with where it is raised."""
    codes: dict[str, str] = {}
    for path in sorted((ROOT / "src" / "sightline").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name not in ERROR_MAKERS or len(node.args) < 2:
                continue
            code = node.args[1]
            if isinstance(code, ast.Constant) and isinstance(code.value, str):
                codes[code.value] = f"{path.relative_to(ROOT)}:{node.lineno}"
    return codes


def test_every_error_code_in_the_code_is_documented() -> None:
    docs = "\n".join(p.read_text("utf-8") for p in (ROOT / "docs").glob("*.md"))
    codes = _codes_in_source()
    assert "not_signed_in" in codes  # the scan itself works
    missing = {code: where for code, where in codes.items() if f"`{code}`" not in docs}
    assert not missing, f"error codes missing from docs/: {missing}"
