"""The connection check on its own: address policy, size cap and snippet detection."""

from __future__ import annotations

import pytest

from sightline.sites.check import MAX_BYTES, ConnectionChecker, address_allowed, find_snippet_keys
from tests.support.pages import customer_site


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("224.0.0.1", False),
    ],
)
def test_only_public_addresses_are_allowed_by_default(address: str, public: bool) -> None:
    assert address_allowed(address, allow_private=False) is public


def test_allowing_private_addresses_still_refuses_unspecified_and_multicast() -> None:
    assert address_allowed("127.0.0.1", allow_private=True)
    assert address_allowed("10.0.0.1", allow_private=True)
    assert not address_allowed("0.0.0.0", allow_private=True)
    assert not address_allowed("224.0.0.1", allow_private=True)


def test_snippets_are_found_in_any_attribute_order_and_quoting() -> None:
    html = """<html><head>
      <script data-site='k1' defer src="https://a.example/analytics.js"></script>
      <SCRIPT SRC=https://a.example/analytics.js?v=2 DATA-SITE=k2></SCRIPT>
      <script src="https://a.example/other.js" data-site="k3"></script>
    </head></html>"""
    assert find_snippet_keys(html) == ["k1", "k2"]


def test_a_name_resolving_to_a_mix_of_public_and_private_addresses_is_refused() -> None:
    checker = ConnectionChecker(
        timeout=2,
        min_interval=0,
        allow_private=False,
        resolver=lambda host, port: ["93.184.216.34", "127.0.0.1"],
    )
    result = checker.check("rebind.example.com", "key")
    assert result.error == "blocked_address"


def test_the_check_connects_to_the_address_it_checked_and_reads_at_most_512_kib() -> None:
    with customer_site() as customer:
        padding = "x" * (MAX_BYTES + 1000)
        customer.home(f"<html>{padding}<script src='/analytics.js' data-site='key'></script></html>")
        # The name resolves (once) to the loopback address the customer site listens on.
        checker = ConnectionChecker(
            timeout=5, min_interval=0, allow_private=True, resolver=lambda host, port: ["127.0.0.1"]
        )
        result = checker.check(f"shop.localhost:{customer.port}", "key")
        assert customer.requests[0][1]["Host"] == f"shop.localhost:{customer.port}"
    # The snippet sits past the cap, so it is not seen.
    assert result.error == "snippet_not_found"
