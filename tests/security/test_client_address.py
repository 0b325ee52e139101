"""Which address a request comes from: only ``--trusted-proxies`` may speak for a client."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import httpx
import pytest

from sightline.clientaddr import client_address, forwarded_for, parse_address
from sightline.settings import SettingsError, load
from tests.conftest import StartServer
from tests.support.server import LiveServer


def _scope(peer: str, *headers: tuple[str, str]) -> dict[str, object]:
    return {
        "type": "http",
        "client": (peer, 40000),
        "headers": [(k.lower().encode(), v.encode("latin-1")) for k, v in headers],
    }


def _trusted(raw: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    value = load({"trusted_proxies": raw}, environ={}).trusted_proxies
    assert isinstance(value, tuple)
    return value


def test_without_trusted_proxies_the_peer_is_the_client_whatever_the_headers_say() -> None:
    scope = _scope("127.0.0.1", ("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=198.51.100.1"))
    assert client_address(scope, None) == "127.0.0.1"
    assert client_address(scope, ()) == "127.0.0.1"


def test_an_untrusted_peer_cannot_name_its_own_address() -> None:
    scope = _scope("198.51.100.7", ("X-Forwarded-For", "203.0.113.9"))
    assert client_address(scope, _trusted("10.0.0.0/8")) == "198.51.100.7"


def test_the_right_most_untrusted_address_of_x_forwarded_for_is_the_client() -> None:
    trusted = _trusted("10.0.0.0/8, 127.0.0.1")
    # The client forged the left-most entry; the proxies appended the real ones.
    scope = _scope("127.0.0.1", ("X-Forwarded-For", "1.1.1.1, 203.0.113.9, 10.1.2.3"))
    assert client_address(scope, trusted) == "203.0.113.9"


def test_several_x_forwarded_for_headers_are_read_in_order() -> None:
    scope = _scope("10.0.0.2", ("X-Forwarded-For", "1.1.1.1"), ("X-Forwarded-For", "203.0.113.9"))
    assert client_address(scope, _trusted("10.0.0.0/8")) == "203.0.113.9"


def test_the_standard_forwarded_header_is_understood_with_ports_quotes_and_ipv6() -> None:
    trusted = _trusted("10.0.0.0/8,2001:db8:ffff::/48")
    header = 'for=192.0.2.43:4711;proto=https, for="[2001:db8::17]:4711", For="[2001:db8:ffff::1]"'
    scope = _scope("10.9.9.9", ("Forwarded", header))
    assert client_address(scope, trusted, "forwarded") == "2001:db8::17"
    assert forwarded_for(["for=a;by=b, proto=http"]) == ["a", "unknown"]


def test_only_the_chosen_header_is_believed_and_the_other_is_ignored() -> None:
    trusted = _trusted("127.0.0.1")
    # A visitor's own Forwarded header, passed on by a proxy that sets X-Forwarded-For.
    scope = _scope("127.0.0.1", ("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=127.0.0.1"))
    assert client_address(scope, trusted) == "203.0.113.9"
    assert client_address(scope, trusted, "x-forwarded-for") == "203.0.113.9"
    # The operator whose proxy sets Forwarded chooses it; then X-Forwarded-For is the visitor's.
    scope = _scope("127.0.0.1", ("X-Forwarded-For", "127.0.0.1"), ("Forwarded", "for=203.0.113.9"))
    assert client_address(scope, trusted, "forwarded") == "203.0.113.9"
    # A header holding the address alone.
    scope = _scope("127.0.0.1", ("X-Real-IP", "198.51.100.4"), ("X-Forwarded-For", "127.0.0.1"))
    assert client_address(scope, trusted, "x-real-ip") == "198.51.100.4"


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("forwarded", "for=203.0.113.1, for=_hidden, for=10.0.0.5"),
        ("forwarded", "for=_hidden"),
        ("forwarded", "for=unknown"),
        ("forwarded", "proto=https"),
        ("x-forwarded-for", "203.0.113.9, unknown"),
        ("x-forwarded-for", "unknown"),
        ("x-forwarded-for", "garbage\u00b2"),
        ("x-forwarded-for", "203.0.113.9, , 10.0.0.5"),
        ("x-forwarded-for", ""),
        ("x-forwarded-for", "127.0.0.1 , nonsense"),
    ],
)
def test_an_unreadable_hop_is_an_unknown_client_never_the_proxy_or_loopback(header: str, value: str) -> None:
    trusted = _trusted("10.0.0.0/8, 127.0.0.1")
    for peer in ("10.0.0.2", "127.0.0.1"):
        assert client_address(_scope(peer, (header, value)), trusted, header) == "unknown"


def test_a_trusted_proxys_own_request_without_the_header_is_the_proxys() -> None:
    trusted = _trusted("10.0.0.0/8")
    assert client_address(_scope("10.0.0.2", ("Forwarded", "for=203.0.113.9")), trusted) == "10.0.0.2"


def test_a_bad_client_address_header_setting_is_refused() -> None:
    assert load({}, environ={}).client_address_header == "x-forwarded-for"
    assert load({"client_address_header": " Forwarded "}, environ={}).client_address_header == "forwarded"
    with pytest.raises(SettingsError, match=r"--client-address-header"):
        load({"client_address_header": "X Forwarded"}, environ={})


def test_when_every_hop_is_trusted_the_left_most_is_the_client() -> None:
    scope = _scope("10.0.0.2", ("X-Forwarded-For", "10.0.0.9, 10.0.0.3"))
    assert client_address(scope, _trusted("10.0.0.0/8")) == "10.0.0.9"


def test_ipv4_mapped_ipv6_peers_are_matched_as_ipv4() -> None:
    scope = _scope("::ffff:10.0.0.2", ("X-Forwarded-For", "203.0.113.9"))
    assert client_address(scope, _trusted("10.0.0.0/8")) == "203.0.113.9"
    assert client_address({"type": "http", "headers": []}, None) == "unknown"


NOT_ADDRESSES = ["1.2.3.4:99999", "[::1", "1.2.3.4:", "[::1]x", "\u0661.\u0662.\u0663.\u0664", "", "x" * 99]


@pytest.mark.parametrize("text", NOT_ADDRESSES)
def test_things_that_are_not_addresses_are_refused(text: str) -> None:
    assert parse_address(text) is None


@pytest.mark.parametrize(
    "peer",
    ["127.0.0.1", "203.0.113.9", "0.0.0.0", "255.255.255.255", "010.0.0.1", "1.2.3.04", " 10.0.0.1",
     "10.0.0.1:80", "1.2.3", "256.0.0.1", "::1", "::ffff:192.0.2.1", "2001:DB8::1", "fe80::1%eth0", "x"],
)  # fmt: skip
def test_a_peer_without_trusted_proxies_is_written_as_parse_address_writes_it(peer: str) -> None:
    """Plain IPv4 peers take a shortcut around ``ipaddress``: it must give the same text."""
    found = parse_address(peer)
    assert client_address(_scope(peer), None) == (str(found) if found else "unknown")


def test_a_zone_index_is_dropped() -> None:
    assert str(parse_address("fe80::1%eth0")) == "fe80::1"


def test_a_bad_trusted_proxies_setting_is_refused_naming_the_entry() -> None:
    with pytest.raises(SettingsError, match=r"--trusted-proxies: 'proxy\.local'"):
        load({"trusted_proxies": "10.0.0.1, proxy.local"}, environ={})
    assert load({}, environ={}).trusted_proxies is None


def _spray(client: httpx.Client, count: int) -> list[int]:
    codes = []
    for n in range(count):
        response = client.post(
            "/api/login",
            json={"email": f"nobody{n}@example.com", "password": "wrong password"},
            headers={"X-Forwarded-For": f"203.0.113.{n}", "Forwarded": f"for=198.51.100.{n}"},
        )
        codes.append(response.status_code)
    return codes


def test_a_local_client_cannot_pick_its_own_throttle_key_with_forwarding_headers(
    start_server: StartServer,
) -> None:
    server = start_server(env={"SIGHTLINE_LOGIN_MAX_FAILURES_PER_IP": "3"})
    with server.client() as client:
        assert _spray(client, 5) == [401, 401, 401, 429, 429]


@pytest.fixture(scope="module")
def behind_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server behind a proxy on loopback, 3 failed sign-ins allowed per client address: shared by
    the tests below, each refused sign-in from addresses and to accounts of its own."""
    env = {"SIGHTLINE_LOGIN_MAX_FAILURES_PER_IP": "3", "SIGHTLINE_TRUSTED_PROXIES": "127.0.0.1,::1"}
    server = LiveServer(tmp_path_factory.mktemp("behind-proxy") / "data", env=env).start()
    yield server
    server.stop()


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_throttle_key(
    behind_proxy: LiveServer,
) -> None:
    with behind_proxy.client() as client:
        assert _spray(client, 5) == [401] * 5


def test_a_clients_own_forwarded_header_cannot_rotate_its_throttle_key_behind_a_proxy(
    behind_proxy: LiveServer,
) -> None:
    with behind_proxy.client() as client:
        codes = []
        for n in range(5):
            response = client.post(
                "/api/login",
                json={"email": f"rotating{n}@example.com", "password": "wrong password"},
                # As nginx passes it on: its own X-Forwarded-For, the visitor's Forwarded.
                headers={"X-Forwarded-For": "203.0.113.9", "Forwarded": f"for=198.51.100.{n}"},
            )
            codes.append(response.status_code)
        assert codes == [401, 401, 401, 429, 429]


def test_metrics_behind_a_proxy_answer_no_remote_client_however_it_names_itself(
    behind_proxy: LiveServer,
) -> None:
    server = behind_proxy
    refused = [
        {"X-Forwarded-For": "203.0.113.9"},
        {"X-Forwarded-For": "203.0.113.9", "Forwarded": "for=127.0.0.1"},
        {"X-Forwarded-For": "203.0.113.9", "Forwarded": "for=_hidden"},
        {"X-Forwarded-For": "203.0.113.9, unknown"},
        {"X-Forwarded-For": "_hidden"},
        {"X-Forwarded-For": "127.0.0.1, garbage"},
    ]
    with server.client() as client:
        for headers in refused:
            response = client.get("/metrics", headers=headers)
            assert response.status_code == 403, headers
            assert response.json()["error"]["code"] == "forbidden"
        assert client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"}).status_code == 200
        assert client.get("/metrics").status_code == 200  # the proxy's own request


def test_an_operator_whose_proxy_sets_forwarded_chooses_it(start_server: StartServer) -> None:
    server = start_server(
        env={"SIGHTLINE_TRUSTED_PROXIES": "127.0.0.1,::1", "SIGHTLINE_CLIENT_ADDRESS_HEADER": "Forwarded"}
    )
    with server.client() as client:
        remote = {"Forwarded": "for=203.0.113.9", "X-Forwarded-For": "127.0.0.1"}
        assert client.get("/metrics", headers=remote).status_code == 403
        assert client.get("/metrics", headers={"Forwarded": "for=_hidden"}).status_code == 403
        assert client.get("/metrics", headers={"Forwarded": 'for="[::1]"'}).status_code == 200
