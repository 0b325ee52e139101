"""The registry of dimensions (``sightline.dimensions``): what derives from it agrees with it, and
the docs list it as it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sightline import dimensions
from sightline.imports import figures
from sightline.ingest import sources
from sightline.reports import conversions, filters, params, queries
from sightline.store import feed, schema

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "reports.md"


def test_the_docs_list_the_dimensions_exactly_as_the_registry_holds_them() -> None:
    marked = r"<!-- dimensions-table:start -->\n(.*?)\n<!-- dimensions-table:end -->"
    block = re.search(marked, DOCS.read_text("utf-8"), re.S)
    assert block is not None, "docs/reports.md lost its dimensions table markers"
    assert block.group(1) == dimensions.markdown_table(), "run: .venv/bin/python scripts/docs_tables.py"


def test_no_two_dimensions_share_a_spelling_a_key_or_a_console_tab() -> None:
    spellings = [s for d in dimensions.DIMENSIONS for s in d.spellings]
    assert len(spellings) == len(set(spellings))
    keys = [d.key for d in dimensions.DIMENSIONS]
    assert len(keys) == len(set(keys))


def test_every_spelling_of_a_breakdown_is_one_the_reports_accept_as_the_same_table() -> None:
    for d in dimensions.supporting(dimensions.BREAKDOWN):
        tables = {params.DIMENSIONS[s] for s in d.spellings}
        assert tables == {params.Dimension(d.key, d.order, d.fields)}, d.name
        for spelling in d.spellings:
            asked = [("dimension", spelling), *_named(d)]
            parsed = params.parse(asked, [*params.COMMON, "dimension", "name"])
            assert parsed.dimension == spelling
    assert params.BREAKDOWNS[: len(dimensions.supporting(dimensions.BREAKDOWN))] == tuple(
        d.name for d in dimensions.supporting(dimensions.BREAKDOWN)
    )


def _named(d: dimensions.Dimension) -> list[tuple[str, str]]:
    return [("name", "signup")] if d.name in params.NAMED else []


@pytest.mark.parametrize("dimension", dimensions.supporting(dimensions.FILTER), ids=lambda d: d.name)
def test_every_filter_of_the_registry_is_a_parameter_of_every_report(dimension: dimensions.Dimension) -> None:
    value = {dimensions.GOAL: "3", dimensions.PROP: "plan:pro", dimensions.PATH: "/a"}.get(dimension.values)
    value = value or ("direct" if dimension.values == dimensions.CHANNEL else "x")
    query = params.parse([(dimension.name, value)], params.COMMON)
    assert [rule.name for rule in query.filters.rules] == [dimension.name]


def test_the_reports_read_each_visit_dimension_from_the_column_the_registry_names() -> None:
    visits = {d.name: d for d in dimensions.DIMENSIONS if d.table == "visits"}
    assert {name: d.column for name, d in visits.items()} == filters.VISIT_FILTERS
    assert {d.key: d.column for d in visits.values()} == queries.VISIT_COLUMNS
    assert {d.name for d in visits.values() if d.on_rows} == queries.ROW_FILTERS
    assert set(filters.NAMES) == {d.name for d in dimensions.supporting(dimensions.FILTER)}


def test_funnels_and_imports_take_the_dimensions_the_registry_says_they_support() -> None:
    funnel = dimensions.supporting(dimensions.FUNNEL)
    assert set(conversions.FUNNEL_NAMES) == {d.name for d in funnel}
    assert set(conversions.FUNNEL_DIMENSIONS) == {s for d in funnel for s in d.spellings}
    assert all(d.stored and d.on_rows for d in funnel)  # a column of every event's row
    assert {d.key for d in dimensions.supporting(dimensions.IMPORT)} == figures.DIMENSIONS


def test_the_store_keeps_a_column_for_each_stored_visit_dimension_and_the_feed_fills_each() -> None:
    stored = tuple(d.key for d in dimensions.DIMENSIONS if d.table == "visits" and d.on_rows and d.stored)
    assert stored == schema.VISIT_ATTRIBUTES
    assert set(stored) <= set(schema.EVENT_COLUMNS)
    assert set(stored) <= set(schema.VISIT_COLUMNS)
    assert tuple(feed.ATTRIBUTES) == stored, "the feed fills every stored attribute, in the registry's order"


def test_the_consoles_lists_are_generated_from_the_registry_as_it_is() -> None:
    generated = ROOT / "ui" / "src" / "reports" / "dimensions.gen.ts"
    fix = "run: .venv/bin/python scripts/docs_tables.py"
    assert generated.read_text("utf-8") == dimensions.typescript(), fix


@pytest.mark.parametrize(
    ("tag", "kept"),
    [
        ("en", "en"),
        ("pt-BR", "pt"),
        ("zh-Hant-TW", "zh"),
        ("EN_us", "en"),
        ("gsw", "gsw"),
        ("", None),
        ("*", None),
        ("x", None),
        ("english", None),
        ("é", None),
        ("12-34", None),
    ],
)
def test_a_language_is_kept_as_its_primary_subtag_and_nothing_finer(tag: str, kept: str | None) -> None:
    assert sources.language(tag) == kept


def test_the_accept_language_headers_first_tag_is_the_fallback() -> None:
    assert sources.first_language("fr-CH, fr;q=0.9, en;q=0.8") == "fr"
    assert sources.first_language("en-GB;q=0.8") == "en"
    assert sources.first_language(None) is None
