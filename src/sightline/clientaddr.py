"""The one answer to "which address did this request come from?".

Every part that needs a request's client address (the login throttle, ingest's country lookup and
address exclusions, the ``/metrics`` loopback rule) asks ``client_address``; nothing else reads a
forwarding header or the socket's peer. Uvicorn's own proxy-header handling is off
(``cli.serve``), so the ASGI ``client`` is always the TCP peer.

Rules (PRODUCT.md, "Geography and client addresses"):

- Only a connection whose peer is in ``--trusted-proxies`` has a forwarding header believed; by
  default no proxy is trusted and the peer is the client.
- One header is read: the one the operator names with ``--client-address-header`` (default
  ``X-Forwarded-For``), the one their proxy sets. Every other forwarding header is ignored, since
  a proxy passes on what the visitor sent (a visitor's own ``Forwarded: for=127.0.0.1`` is not
  the proxy's word). ``Forwarded`` is read as RFC 7239 (its ``for=`` parameters); any other
  header as a comma-separated list of addresses (``X-Forwarded-For``, ``X-Real-IP``). Several
  headers of that name are read in order.
- Walking the chain from the right, every trusted address is skipped; the first address that is
  not trusted is the client. A hop that is not an address (``unknown``, an obfuscated ``_hidden``
  identifier, garbage, an empty header) makes the client ``unknown``: a remote client whose
  address is not known, never the proxy's own or a loopback address. When every hop is trusted,
  the left-most is the client; a trusted proxy's request without the header is the proxy's own.

Addresses are returned as normalised text (``2001:db8::1``, IPv4-mapped IPv6 unmapped) and are
never stored or logged by Sightline. The settings themselves are parsed by ``settings``: a tuple
of ``ipaddress`` networks and a lower-case header name. Imports nothing from the rest of Sightline.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

UNKNOWN = "unknown"
X_FORWARDED_FOR = "x-forwarded-for"
FORWARDED = "forwarded"
MAX_HOPS = 64  # a longer chain is read only from its right end


def parse_address(text: str) -> Address | None:
    """One address as it appears in a header or a socket peer; ``None`` when it is not one.

    Accepts ``1.2.3.4``, ``1.2.3.4:5678``, ``::1``, ``[::1]`` and ``[::1]:5678`` (optionally
    quoted); a zone index (``fe80::1%eth0``) is dropped.
    """
    value = text.strip().strip('"').strip()
    if not value or len(value) > 64 or not value.isascii():
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or (value[end + 1 :] and not _is_port(value[end + 1 :])):
            return None
        value = value[1:end]
    elif value.count(":") == 1:
        host, _, port = value.partition(":")
        if not _is_port(":" + port):
            return None
        value = host
    value = value.split("%", 1)[0]
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _plain_ipv4(text: object) -> str | None:
    """``text`` when it is an IPv4 address written as ``parse_address`` would give it back
    (four decimal parts without leading zeros: what a socket peer is), else None. In C, about
    0.3 µs, where ``ipaddress`` takes several: ingest asks once per request."""
    if type(text) is not str:
        return None
    try:
        packed = socket.inet_pton(socket.AF_INET, text)
    except OSError:
        return None
    plain = socket.inet_ntop(socket.AF_INET, packed)
    return plain if plain == text else None


def _is_port(text: str) -> bool:
    digits = text[1:]
    ok = text.startswith(":") and 0 < len(digits) <= 5 and digits.isascii() and digits.isdigit()
    return ok and int(digits) <= 65535


def is_trusted(address: Address, trusted: Sequence[Network]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)


def _headers(scope: Any, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope.get("headers", ()) if key.lower() == name]


def forwarded_for(values: Iterable[str]) -> list[str]:
    """The ``for=`` values of ``Forwarded`` headers, left to right (RFC 7239).

    An element without ``for=`` contributes ``unknown``, so the chain keeps one entry per hop.
    """
    chain: list[str] = []
    for header in values:
        for element in _split_quoted(header, ","):
            found = UNKNOWN
            for pair in _split_quoted(element, ";"):
                key, sep, value = pair.partition("=")
                if sep and key.strip().lower() == "for":
                    found = value.strip()
            chain.append(found)
    return chain


def _split_quoted(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == separator and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part for part in (p.strip() for p in parts) if part]


def chain_of(scope: Any, header: str = X_FORWARDED_FOR) -> list[str] | None:
    """The forwarding chain a request claims in ``header``, left (origin) to right (nearest
    proxy); None when the request has no such header."""
    values = _headers(scope, header.encode("latin-1"))
    if not values:
        return None
    if header == FORWARDED:
        return forwarded_for(values)
    return [item.strip() for value in values for item in value.split(",")]


def client_address(scope: Any, trusted: Sequence[Network] | None, header: str = X_FORWARDED_FOR) -> str:
    """The client's address for an ASGI ``scope`` (HTTP or WebSocket), or ``"unknown"``.

    ``trusted`` is the ``--trusted-proxies`` setting (``None`` or empty: trust no proxy), ``header``
    the ``--client-address-header`` setting, lower-case. Works on a Starlette ``Request`` too,
    which is a mapping over its scope.
    """
    peer = scope.get("client")
    if peer and not trusted:
        plain = _plain_ipv4(peer[0])
        if plain is not None:  # the usual case, without building an ipaddress object
            return plain
    address = parse_address(str(peer[0])) if peer else None
    if address is None:
        return UNKNOWN
    if not trusted or not is_trusted(address, trusted):
        return str(address)
    chain = chain_of(scope, header)
    if chain is None:
        return str(address)
    if not chain:
        return UNKNOWN
    for hop in reversed(chain[-MAX_HOPS:]):
        claimed = parse_address(hop)
        if claimed is None:
            return UNKNOWN
        address = claimed
        if not is_trusted(address, trusted):
            break
    return str(address)
