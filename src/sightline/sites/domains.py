"""What a site's ``domain`` may be: a bare host name, lowercased and IDNA-encoded.

``localhost``, ``*.localhost``, IP literals and ``host:port`` are accepted for development.
"""

from __future__ import annotations

import ipaddress
import re

import idna

from sightline.numbers import port_number

_LABEL = re.compile(r"\A(?!-)[a-z0-9-]{1,63}(?<!-)\Z")
DEV_SUFFIXES = (".localhost", ".test", ".local")


class DomainError(ValueError):
    pass


def normalise_domain(raw: object) -> str:
    """The canonical form of ``raw`` or a DomainError saying what is wrong with it."""
    if not isinstance(raw, str):
        raise DomainError("The domain is a host name such as example.com.")
    value = raw.strip().lower().rstrip(".")
    if not value:
        raise DomainError("The domain is required, for example example.com.")
    if "://" in value or "/" in value or "?" in value or "#" in value:
        raise DomainError("Give only the host name, without scheme or path, for example example.com.")
    if "@" in value:
        raise DomainError("The domain may not contain user information.")
    if any(ch.isspace() for ch in value) or any(ord(ch) < 32 for ch in value):
        raise DomainError("The domain may not contain spaces.")
    host, port = _split_port(value)
    host = _canonical_host(host)
    if len(host) > 253:
        raise DomainError("The domain is longer than 253 characters.")
    return host if port is None else f"{host}:{port}"


def _split_port(value: str) -> tuple[str, int | None]:
    if value.startswith("["):
        end = value.find("]")
        if end == -1:
            raise DomainError("The domain has an unclosed '['.")
        host, rest = value[1:end], value[end + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise DomainError("The bracketed part is not an IPv6 address.") from None
        host = f"[{host}]"
    elif value.count(":") == 1:
        host, rest = value.split(":")
        rest = ":" + rest
    elif ":" in value:
        raise DomainError("Write an IPv6 address in brackets, for example [::1]:8080.")
    else:
        host, rest = value, ""
    if not rest:
        return host, None
    port = port_number(rest[1:]) if rest.startswith(":") else None
    if port is None:
        raise DomainError("The port must be a number from 1 to 65535.")
    return host, port


def _canonical_host(host: str) -> str:
    if host.startswith("["):
        return host
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    try:
        ascii_host = idna.encode(host, uts46=True).decode("ascii") if not host.isascii() else host
    except (idna.IDNAError, UnicodeError):
        raise DomainError("The domain is not a valid host name.") from None
    labels = ascii_host.split(".")
    if not all(_LABEL.match(label) for label in labels):
        raise DomainError("The domain is not a valid host name: use letters, digits, '-' and '.'.")
    if len(labels) == 1 and ascii_host != "localhost":
        raise DomainError("The domain needs a dot, for example example.com (or localhost).")
    if labels[-1].isascii() and labels[-1].isdigit():
        raise DomainError("The domain is not a valid host name.")
    return ascii_host


def host_of(domain: str) -> str:
    """The host part of a stored domain, without port or brackets."""
    if domain.startswith("["):
        return domain[1 : domain.index("]")]
    return domain.rsplit(":", 1)[0] if ":" in domain else domain


def is_development(domain: str) -> bool:
    """Hosts reached over plain http by connection checks."""
    host = host_of(domain)
    if host == "localhost" or host.endswith(DEV_SUFFIXES):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or ipaddress.ip_address(host).is_private
    except ValueError:
        return False
