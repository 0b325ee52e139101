"""Item 7 of the attack pass: charset, private IPv6 loopback, default ports in --public-url."""

from __future__ import annotations

import pytest

from sightline.settings import load
from sightline.sites.check import _text, address_allowed


def test_a_home_page_with_an_unknown_charset_is_read_as_utf8() -> None:
    assert _text("caf\u00e9".encode(), "rot13") == "caf\u00e9"
    assert _text(b"abc", None) == "abc"


@pytest.mark.parametrize("address", ["::1", "127.0.0.1", "10.0.0.1", "fe80::1", "fd00::1"])
def test_allowing_private_addresses_allows_ipv6_loopback_too(address: str) -> None:
    assert address_allowed(address, True)
    assert not address_allowed(address, False)


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "224.0.0.1", "ff02::1"])
def test_unspecified_and_multicast_stay_refused(address: str) -> None:
    assert not address_allowed(address, True)


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("http://host:80", "http://host"),
        ("https://X.example:443/", "https://x.example"),
        ("https://x.example:8443", "https://x.example:8443"),
        ("http://[::1]:80", "http://[::1]"),
        ("http://host:443", "http://host:443"),
    ],
)
def test_the_public_url_drops_its_schemes_default_port(given: str, origin: str) -> None:
    assert load({"public_url": given}, environ={}).console_origin == origin
