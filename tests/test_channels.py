"""The channel rules (``sightline.channels``): the docs' table, the SQL by which the store's feed
writes each visit's channel (and an upgrade fills it in) against the rules as written, and ad
clicks' ids at ingest."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import duckdb
import pytest

from sightline import channels
from sightline.ingest.batch import Utm
from sightline.ingest.sources import place, place_with_utm
from sightline.source_names import source_name

DOCS = Path(__file__).resolve().parent.parent / "docs" / "reports.md"


def test_the_docs_list_the_channel_rules_exactly_as_the_module_holds_them() -> None:
    block = re.search(
        r"<!-- channels-table:start -->\n(.*?)\n<!-- channels-table:end -->", DOCS.read_text("utf-8"), re.S
    )
    assert block is not None, "docs/reports.md lost its channels table markers"
    assert block.group(1) == channels.markdown_table(), "run: .venv/bin/python scripts/docs_tables.py"


@pytest.mark.parametrize(
    ("source", "utm_source", "utm_medium", "expected"),
    [
        (None, None, None, "direct"),
        ("(none)", None, "", "direct"),
        ("Google", None, None, "organic_search"),
        ("google", "google", "organic", "organic_search"),
        ("Google", "google", "cpc", "paid_search"),
        ("Bing", None, "PPC", "paid_search"),
        ("partner.example", None, "display", "paid_search"),
        ("Facebook", "fb", "paid", "paid_social"),
        ("news.example", None, "paid_social", "paid_social"),
        ("Twitter", None, None, "organic_social"),
        ("blog.example", None, "social", "organic_social"),
        ("ChatGPT", None, None, "ai_assistants"),
        ("shop.example", "chatgpt.com", None, "ai_assistants"),
        ("Perplexity", None, "referral", "ai_assistants"),
        ("claude.ai", None, None, "ai_assistants"),
        ("Gemini", None, None, "ai_assistants"),
        ("newsletter", "newsletter", "email", "email"),
        ("Gmail", None, None, "email"),
        ("blog.example", None, None, "referral"),
        ("(none)", None, "referral", "referral"),
    ],
)
def test_a_visit_gets_the_channel_of_the_first_rule_that_holds(
    source: str | None, utm_source: str | None, utm_medium: str | None, expected: str
) -> None:
    assert channels.classify(source, utm_source, utm_medium) == expected


def test_the_stores_sql_names_the_same_channel_as_the_rules_for_every_kind_of_visit() -> None:
    sources = [
        "(none)",
        "Google",
        "google",
        "Facebook",
        "FB",
        "ChatGPT",
        "claude.ai",
        "Gmail",
        "blog.example",
    ]
    tags = ["", "google", "chatgpt.com", "newsletter", "x"]
    mediums = ["", "cpc", "CPM", "paid", "paid_social", "email", "social", "organic", "referral", "display"]
    combos = list(itertools.product(sources, tags, mediums))
    con = duckdb.connect()
    con.execute("CREATE TABLE v (source VARCHAR, utm_source VARCHAR, utm_medium VARCHAR)")
    con.executemany("INSERT INTO v VALUES (?, ?, ?)", combos)
    found = con.execute(f"SELECT source, utm_source, utm_medium, {channels.SQL} FROM v").fetchall()
    assert len(found) == len(combos)
    for source, utm_source, utm_medium, channel in found:
        assert channel == channels.classify(source, utm_source, utm_medium), (source, utm_source, utm_medium)
    assert {row[3] for row in found} == set(channels.CHANNELS)


def test_an_ad_clicks_id_counts_as_its_networks_paid_tags_and_is_not_kept() -> None:
    source, referrer, utm_source, medium, *_ = place("https://shop.example/?gclid=Cj0abc", "", "shop.example")
    assert (source, referrer, utm_source, medium) == ("google", None, "google", "cpc")
    assert channels.classify(source, utm_source, medium) == "paid_search"
    found = place("https://shop.example/p?x=1&msclkid=9f8e", "https://www.bing.com/", "shop.example")
    assert found[0] == "Bing"
    assert found[2:4] == ("bing", "cpc")
    assert "9f8e" not in repr(found)
    social = place("https://shop.example/?ttclid=E.C.P", "", "shop.example")
    assert channels.classify(social[0], social[2], social[3]) == "paid_social"


def test_the_pages_own_tags_win_over_a_click_id_and_a_click_id_in_the_fragment_is_none() -> None:
    tagged = place("https://shop.example/?utm_source=mail&utm_medium=email&gclid=1", "", "shop.example")
    assert tagged[2:4] == ("mail", "email")
    sdk = place_with_utm("https://shop.example/?gclid=1", "", "shop.example", Utm(source="spring"))
    assert sdk[2:4] == ("spring", "cpc")
    assert place("https://shop.example/#gclid=1", "", "shop.example")[2:4] == (None, None)
    assert place("https://shop.example/?gclid=", "", "shop.example")[2:4] == (None, None)
    assert place("https://shop.example/?notgclid=1", "", "shop.example")[2:4] == (None, None)


def test_geminis_referrer_is_named_gemini_not_google() -> None:
    assert source_name("gemini.google.com") == "Gemini"
    assert source_name("www.google.com") == "Google"


def test_the_console_names_the_channels_as_the_module_does() -> None:
    source = (DOCS.parent.parent / "ui" / "src" / "reports" / "Breakdown.tsx").read_text("utf-8")
    block = re.search(r"CHANNEL_NAMES: Record<string, string> = \{(.*?)\};", source, re.S)
    assert block is not None, "ui/src/reports/Breakdown.tsx lost CHANNEL_NAMES"
    names = dict(re.findall(r'^\s*(\w+): "([^"]+)",$', block.group(1), re.M))
    assert names == channels.CHANNELS
