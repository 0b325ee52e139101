from __future__ import annotations

import pytest

from sightline.sites.domains import DomainError, is_development, normalise_domain


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("example.com", "example.com"),
        ("  Shop.Example.COM ", "shop.example.com"),
        ("example.com.", "example.com"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("localhost", "localhost"),
        ("localhost:3000", "localhost:3000"),
        ("app.localhost:8080", "app.localhost:8080"),
        ("127.0.0.1:8080", "127.0.0.1:8080"),
        ("[::1]:8080", "[::1]:8080"),
        ("a-b.c-d.example.org", "a-b.c-d.example.org"),
    ],
)
def test_a_good_domain_is_stored_lowercased_and_idna_encoded(raw: str, expected: str) -> None:
    assert normalise_domain(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "https://example.com",
        "example.com/path",
        "example.com?x=1",
        "example.com#top",
        "user@example.com",
        "user:pass@example.com",
        "exa mple.com",
        "example",
        "-bad.example.com",
        "bad-.example.com",
        "ex_ample.com",
        "example.com:0",
        "example.com:65536",
        "example.com:http",
        "::1",
        "[::1",
        "[nope]:80",
        "a" * 64 + ".com",
        ("a" * 60 + ".") * 5 + "com",
        "example.123",
        "exa\tmple.com",
        "exa\nmple.com",
        "..",
        ".example.com",
        "exam\U0001f600ple.com",
    ],
)
def test_a_bad_domain_is_refused_with_a_reason(raw: str) -> None:
    with pytest.raises(DomainError) as refused:
        normalise_domain(raw)
    assert str(refused.value)


def test_non_string_domains_are_refused() -> None:
    for raw in (None, 5, ["example.com"], {"host": "example.com"}):
        with pytest.raises(DomainError):
            normalise_domain(raw)


@pytest.mark.parametrize(
    ("domain", "development"),
    [
        ("localhost", True),
        ("localhost:8000", True),
        ("shop.localhost", True),
        ("site.test", True),
        ("127.0.0.1:9000", True),
        ("[::1]:9000", True),
        ("example.com", False),
        ("8.8.8.8", False),
    ],
)
def test_development_hosts_are_checked_over_plain_http(domain: str, development: bool) -> None:
    assert is_development(domain) is development
