"""Argument rules of window.analytics: each broken rule throws a TypeError that names it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.sdk.helpers import Site, Stored, open_page
from tests.support.shop import Shop

THROWS = """([method, ...args]) => {
  try { analytics[method](...args); return null; }
  catch (e) { return [e.constructor.name, e.message]; }
}"""

BAD_EVENTS = [
    ("''", "name must be a string of 1 to 100 characters"),
    ("'x'.repeat(101)", "name must be a string of 1 to 100 characters"),
    ("42", "name must be a string of 1 to 100 characters"),
    ("undefined", "name must be a string of 1 to 100 characters"),
]
BAD_PROPS = [
    ("[]", "props must be a plain object (not an array or null)"),
    ("null", "props must be a plain object (not an array or null)"),
    ("'text'", "props must be a plain object (not an array or null)"),
    ("new Date()", "props must be a plain object (not an array or null)"),
    (
        "Object.fromEntries(Array.from({length: 31}, (_, i) => ['k' + i, i]))",
        "props may have at most 30 keys",
    ),
    ("{note: 'x'.repeat(2001)}", "props.note must be a string of at most 2000 characters"),
    (
        "{nested: {a: 1}}",
        "props.nested must be a string of at most 2000 characters, a finite number or a boolean",
    ),
    ("{list: [1]}", "props.list must be"),
    ("{missing: null}", "props.missing must be"),
    ("{big: Infinity}", "props.big must be"),
    ("{nan: NaN}", "props.nan must be"),
    ("{fn: () => 1}", "props.fn must be"),
    (
        "Object.fromEntries(Array.from({length: 30}, (_, i) => ['k' + i, '\u00e9'.repeat(2000)]))",
        "props may be at most 48 KiB as JSON",
    ),
]
BAD_IDS = [
    ("''", "id must be a string of 1 to 200 characters"),
    ("'x'.repeat(201)", "id must be a string of 1 to 200 characters"),
    ("12345", "id must be a string of 1 to 200 characters"),
    ("'alice@example.com'", "id must not be an e-mail address"),
    ("'user:Bob.Smith@mail.example.org'", "id must not be an e-mail address"),
    ("'+1 (555) 123-4567'", "id must not be a phone number"),
    ("'+33612345678'", "id must not be a phone number"),
    ("'555-123-4567'", "id must not be a phone number"),
    ("'0612345678'", "id must not be a phone number"),
]


@pytest.fixture
def ready_page(page: Page, shop: Shop, site: Site) -> Page:
    shop.use(site.base_url, site.key, auto_pageviews="false")
    open_page(page, shop.url())
    return page


def _call(page: Page, method: str, *args_js: str) -> list[str] | None:
    result: list[str] | None = page.evaluate(f"({THROWS})(['{method}', {', '.join(args_js)}])")
    return result


def test_event_name_outside_1_to_100_characters_is_a_type_error(ready_page: Page) -> None:
    for name, rule in BAD_EVENTS:
        assert _call(ready_page, "event", name) == ["TypeError", f"analytics.event: {rule}"], name


def test_event_props_breaking_a_rule_is_a_type_error_naming_it(
    ready_page: Page, site: Site, stored: Stored
) -> None:
    for props, rule in BAD_PROPS:
        error = _call(ready_page, "event", "'signup'", props)
        assert error is not None, props
        assert error[0] == "TypeError", props
        assert error[1].startswith(f"analytics.event: {rule}"), (props, error[1])
    ready_page.wait_for_timeout(3500)
    assert stored.all() == []


def test_identify_refuses_codes_breaking_a_rule(ready_page: Page) -> None:
    before = ready_page.evaluate("analytics.getVisitorId()")
    for code, rule in BAD_IDS:
        assert _call(ready_page, "identify", code) == ["TypeError", f"analytics.identify: {rule}"], code
    assert ready_page.evaluate("analytics.getVisitorId()") == before


def test_values_at_the_limits_are_accepted_and_stored(ready_page: Page, site: Site, stored: Stored) -> None:
    props = "Object.fromEntries(Array.from({length: 30}, (_, i) => ['k' + i, i % 2 ? 'y'.repeat(2000) : -i]))"
    assert _call(ready_page, "event", "'n'.repeat(100)", props) is None
    assert _call(ready_page, "event", "'\U0001f600'.repeat(100)") is None
    assert _call(ready_page, "identify", "'v'.repeat(200)") is None
    assert ready_page.evaluate("analytics.getVisitorId()") == "v" * 200
    assert _call(ready_page, "identify", "'order-2024-0001'") is None
    assert _call(ready_page, "event", "'x'", "{}") is None
    first, emoji, empty = stored.wait(3)
    assert first.name == "n" * 100
    assert len(first.props) == 30
    assert first.props["k1"] == "y" * 2000
    assert emoji.name == "\U0001f600" * 100
    assert emoji.visitor_id == first.visitor_id
    assert empty.visitor_id == "order-2024-0001"
    assert empty.props == {}


def test_rules_apply_before_start_too(page: Page, shop: Shop, site: Site) -> None:
    shop.use(site.base_url, site.key, consent="required")
    open_page(page, shop.url(), ready=False)
    assert _call(page, "event", "''") == [
        "TypeError",
        "analytics.event: name must be a string of 1 to 100 characters",
    ]
    assert _call(page, "identify", "'bob@example.com'") == [
        "TypeError",
        "analytics.identify: id must not be an e-mail address",
    ]


def test_lone_surrogates_become_replacement_characters_instead_of_losing_the_batch(
    ready_page: Page, stored: Stored
) -> None:
    # A string cut in the middle of an emoji ('😀'.slice(0, 1)) is not well-formed Unicode.
    ready_page.evaluate("analytics.event('cut' + '\\ud83d', {['k' + '\\udc00']: 'x' + '\\ud800' + 'y'})")
    ready_page.evaluate("analytics.event('whole')")
    cut, whole = stored.wait(2)
    assert cut.name == "cut\ufffd"
    assert cut.props == {"k\ufffd": "x\ufffdy"}
    assert whole.name == "whole"
