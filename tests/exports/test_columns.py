"""The raw events export's columns come from the registry of dimensions: every dimension the
durable log keeps is a column of it, and its header is the one docs/exports.md documents."""

from __future__ import annotations

import re

from sightline.database.schema import events
from sightline.dimensions import DIMENSIONS, EXPORT, Dimension
from sightline.exports.events import COLUMNS, HEADER
from tests.support.browser import ROOT

# The log's columns that are not the events' content: no export has them.
BOOKKEEPING = {"id", "site_id", "batch_id"}


def _kept_in_log(dimension: Dimension) -> str | None:
    """The log's column a dimension is kept in: the one the registry names, else one of the log's
    columns spelled as the dimension's key or store column."""
    logged = set(events.c.keys())
    named: str | None = getattr(dimension, "log_column", None)
    return named or next((c for c in (dimension.key, dimension.column) if c in logged), None)


def test_every_dimension_the_log_keeps_is_a_column_of_the_raw_events_export() -> None:
    exported = {column for _, column in COLUMNS}
    missing = [d.name for d in DIMENSIONS if (kept := _kept_in_log(d)) is not None and kept not in exported]
    assert missing == [], f"dimensions the log keeps but the raw events export leaves out: {missing}"


def test_the_raw_events_export_has_every_column_of_the_log_and_only_those() -> None:
    exported = [column for _, column in COLUMNS]
    assert len(set(exported)) == len(exported)
    assert set(exported) == set(events.c.keys()) - BOOKKEEPING


def test_the_raw_events_header_is_the_one_the_exports_page_documents() -> None:
    page = (ROOT / "docs" / "exports.md").read_text("utf-8")
    documented = re.search(r"^`(time,event,[a-z_,]+)`$", page, re.MULTILINE)
    assert documented is not None, "docs/exports.md lacks the raw events header"
    assert ",".join(HEADER) == documented.group(1)


def test_a_dimension_supports_the_export_exactly_when_the_registry_names_its_log_column() -> None:
    for dimension in DIMENSIONS:
        assert dimension.has(EXPORT) == (dimension.log_column is not None), dimension.name
        assert dimension.log_column is None or dimension.log_column in events.c, dimension.name
