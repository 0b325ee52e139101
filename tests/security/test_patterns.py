"""Identifier patterns match the whole value: ``$`` also matches before a trailing newline.

The attack pass stored a recording under an id ending in ``\\n`` (listed, but impossible to read
or delete), answered a ``batch_id`` ending in ``\\n`` with broken JSON and accepted a survey
``response_id`` with ``\\n``. Every pattern now ends in ``\\Z`` (Python) or ``\\z`` (pydantic's
Rust engine); a scan of the source keeps new ones from ending in ``$``.
"""

from __future__ import annotations

import ast
import gzip
from pathlib import Path

import orjson
import pytest

from sightline.accounts import users
from sightline.errors import ApiError
from sightline.ingest import batch
from sightline.ingest.script import NAME
from sightline.recordings import chunks
from sightline.recordings.store import RECORDING_ID
from sightline.sites.domains import _LABEL
from sightline.surveys.responses import RESPONSE_ID

SOURCE = Path(__file__).resolve().parents[2] / "src" / "sightline"
GOOD_ID = "a" * 22


def _patterns() -> list[tuple[str, int, str]]:
    """Every literal regular expression in the source: ``re.compile(...)`` and ``pattern=...``."""
    found = []
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            args = list(node.args[:1]) if getattr(node.func, "attr", "") == "compile" else []
            args += [kw.value for kw in node.keywords if kw.arg == "pattern"]
            for arg in args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str | bytes):
                    text = arg.value.decode("latin-1") if isinstance(arg.value, bytes) else arg.value
                    found.append((str(path.relative_to(SOURCE)), node.lineno, text))
    return found


def test_no_pattern_in_the_source_ends_with_a_dollar_sign() -> None:
    patterns = _patterns()
    assert len(patterns) > 10
    offenders = [(p, line, text) for p, line, text in patterns if text.endswith("$") or "$)" in text]
    assert offenders == []


@pytest.mark.parametrize("pattern", [RECORDING_ID, RESPONSE_ID])
def test_ids_with_a_trailing_newline_are_refused(pattern: object) -> None:
    assert pattern.match(GOOD_ID)  # type: ignore[attr-defined]
    assert not pattern.match(GOOD_ID + "\n")  # type: ignore[attr-defined]


def test_a_batch_id_with_a_trailing_newline_is_an_invalid_field() -> None:
    body = orjson.dumps(
        {"key": "k", "batch_id": GOOD_ID + "\n", "events": [{"name": "pageview", "path": "/"}]}
    )
    with pytest.raises(batch.BatchError) as refused:
        batch.decode(body)
    assert refused.value.status == 422
    assert refused.value.field == "batch_id"


def test_script_names_emails_and_domains_with_a_trailing_newline_are_refused() -> None:
    assert NAME.match("/analytics.js")
    assert not NAME.match("/analytics.js\n")
    assert users.email_problem("owner@example.com") is None
    assert users.email_problem("owner@example.com\n") is not None
    assert _LABEL.match("example")
    assert not _LABEL.match("example\n")


def _chunk(**fields: object) -> bytes:
    document: dict[str, object] = {
        "session_id": "s1",
        "visitor_id": "v1",
        "events": [{"type": 4, "timestamp": 1_700_000_000_000, "data": {}}],
    }
    document.update(fields)
    return gzip.compress(orjson.dumps(document))


@pytest.mark.parametrize("field", ["session_id", "visitor_id"])
@pytest.mark.parametrize("value", ["a\x00b", "a\nb", "\x7f"])
def test_recording_ids_with_nul_or_control_characters_are_refused(field: str, value: str) -> None:
    with pytest.raises(ApiError) as refused:
        chunks.decode(_chunk(**{field: value}))
    assert refused.value.status == 422
    assert refused.value.field == field
    assert chunks.decode(_chunk()).session_id == "s1"
