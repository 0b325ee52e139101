"""The docs name every error code the server can answer with, and describe the product as it is:
no document tells the history of the work or names a path of one machine (that belongs in git)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ERROR_MAKERS = {"ApiError", "error_response"}
# A machine's own paths, and the words of a work log: which session, helper or issue note a
# figure came from. Examples of what each catches are in the test below.
HISTORY = re.compile(
    r"(?<![\w.~-])/(?:work|tmp|home|root)/"
    r"|\bsessions? \d+"
    r"|\b(?:this|last|next|previous|earlier|that|the same) session\b"
    r"|\bhelpers? `"
    r"|\bissue \d+"
    r"|\bpreviously\b",
    re.IGNORECASE,
)


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


def _tracked(*patterns: str) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", *patterns], capture_output=True, text=True, check=True
    ).stdout.split()


def _tracked_markdown() -> list[Path]:
    return [ROOT / name for name in _tracked("*.md") if not name.startswith("tests/")]


def _history_in(text: str) -> list[str]:
    return [
        f"{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if HISTORY.search(line)
    ]


def test_the_history_patterns_catch_a_work_log_and_leave_the_product_alone() -> None:
    log = [
        "The store, session 14's end-of-session figures (2026-11-24)",
        "measured in sessions 11-12 on another host",
        "as in the last session",
        "### Session 11, helper `feed`: the store's feed rate",
        "(issue 11, bar 5)",
        "the benchmark stores (`/work/benchdata/r10m`)",
        "per-test seconds are in /tmp/suite/times.tsv",
        "previously 120 ms",
    ]
    product = [
        "A session ends after `--session-idle-minutes` without use.",
        "Session recordings: what is captured and masked.",
        "It starts one helper process per CPU.",
        "`BENCH_DIR` keeps the data, by default under `~/.cache/sightline-bench`.",
        "the tests' temporary directory (`$TMPDIR/sightline-pycache-<uid>`)",
    ]
    assert [line for line in log if not HISTORY.search(line)] == []
    assert [line for line in product if HISTORY.search(line)] == []


def test_no_document_tells_the_history_of_the_work_or_names_a_machine_path() -> None:
    documents = _tracked_markdown()
    assert ROOT / "docs" / "performance.md" in documents  # the listing itself works
    found = {
        str(path.relative_to(ROOT)): lines
        for path in documents
        if path.exists() and (lines := _history_in(path.read_text("utf-8")))
    }
    assert not found, f"history or machine paths in the docs (they belong in git): {found}"


def test_no_comment_or_test_names_a_round_of_work_or_a_machine_path() -> None:
    """Code, tests, benchmarks and scripts too: a comment cites the benchmark that measured a
    figure, not the round of work that did."""
    sources = _tracked("*.py", "*.ts", "*.tsx", "*.sh", "Makefile", "*.toml")
    assert "src/sightline/app.py" in sources  # the listing itself works
    found = {
        name: lines
        for name in sources
        if name != "tests/test_docs.py"  # its own examples of what the patterns catch
        and (ROOT / name).exists()
        and (lines := _history_in((ROOT / name).read_text("utf-8")))
    }
    assert not found, f"history or machine paths in the code (they belong in git): {found}"
