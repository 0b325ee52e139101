"""Page targeting: exact, prefix and glob rules, include and exclude lists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sightline.surveys.targeting import is_targeted, rule_matches

paths = st.text(alphabet="/abc-_.%09", min_size=1, max_size=20).map(lambda p: "/" + p)


@pytest.mark.parametrize(
    ("match", "rule", "path", "expected"),
    [
        ("exact", "/pricing", "/pricing", True),
        ("exact", "/pricing", "/pricing/", False),
        ("exact", "/pricing", "/Pricing", False),
        ("exact", "/", "/", True),
        ("prefix", "/blog/", "/blog/post-1", True),
        ("prefix", "/blog/", "/blog", False),
        ("prefix", "/blog", "/blogger", True),
        ("prefix", "/", "/anything/at/all", True),
        ("glob", "/blog/*", "/blog/post-1", True),
        ("glob", "/blog/*", "/blog/", True),
        ("glob", "/blog/*", "/blog/2024/post", False),
        ("glob", "/blog/**", "/blog/2024/post", True),
        ("glob", "/docs/*/install", "/docs/linux/install", True),
        ("glob", "/docs/*/install", "/docs/linux/arm/install", False),
        ("glob", "/docs/**/install", "/docs/linux/arm/install", True),
        ("glob", "/shop/*.html", "/shop/item.html", True),
        ("glob", "/shop/*.html", "/shop/itemxhtml", False),
        ("glob", "/a+b/(x)/*", "/a+b/(x)/y", True),
        ("glob", "/a+b/*", "/aab/y", False),
        ("glob", "*", "/top", False),
        ("glob", "/*", "/top", True),
        ("glob", "**", "/any/depth", True),
    ],
)
def test_one_rule_matches_a_path(match: str, rule: str, path: str, expected: bool) -> None:
    assert rule_matches({"match": match, "path": rule}, path) is expected


def test_no_include_rules_means_every_page() -> None:
    assert is_targeted({"include": [], "exclude": []}, "/anything")
    assert is_targeted({}, "/anything")


def test_a_page_must_match_one_include_rule_and_no_exclude_rule() -> None:
    targeting = {
        "include": [{"match": "prefix", "path": "/app/"}, {"match": "exact", "path": "/pricing"}],
        "exclude": [{"match": "glob", "path": "/app/admin/**"}, {"match": "exact", "path": "/app/login"}],
    }
    assert is_targeted(targeting, "/app/dashboard")
    assert is_targeted(targeting, "/pricing")
    assert not is_targeted(targeting, "/about")
    assert not is_targeted(targeting, "/app/login")
    assert not is_targeted(targeting, "/app/admin/users/3")


def test_exclude_rules_alone_hide_only_their_pages() -> None:
    targeting = {"include": [], "exclude": [{"match": "prefix", "path": "/checkout"}]}
    assert is_targeted(targeting, "/home")
    assert not is_targeted(targeting, "/checkout/pay")


@given(path=paths)
def test_a_glob_without_wildcards_is_an_exact_match(path: str) -> None:
    assert rule_matches({"match": "glob", "path": path}, path)
    assert not rule_matches({"match": "glob", "path": path}, path + "x")


@given(rule=paths, path=paths)
def test_an_exact_match_is_also_a_prefix_match(rule: str, path: str) -> None:
    if rule_matches({"match": "exact", "path": rule}, path):
        assert rule_matches({"match": "prefix", "path": rule}, path)
    assert rule_matches({"match": "glob", "path": "/**"}, path)


def test_an_unknown_match_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown match kind"):
        rule_matches({"match": "regex", "path": "/"}, "/")
