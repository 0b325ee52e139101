"""A site's privacy settings: cookieless counting, excluded client addresses, retention.

Checked here for the console (422 naming the field) and read by ingest through ``SiteInfo``.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import orjson

from sightline.errors import ApiError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_EXCLUSIONS = 100
MAX_RETENTION_DAYS = 36500


def check_exclusions(value: Any) -> list[str]:
    """A list of addresses or CIDR ranges, normalised (``10.0.0.0/8``, ``2001:db8::/32``)."""
    if not isinstance(value, list):
        raise ApiError(
            422, "invalid_field", "Give a list of addresses or CIDR ranges.", field="excluded_addresses"
        )
    if len(value) > MAX_EXCLUSIONS:
        raise ApiError(
            422,
            "invalid_field",
            f"At most {MAX_EXCLUSIONS} addresses or ranges can be excluded.",
            field="excluded_addresses",
        )
    found: list[str] = []
    for index, item in enumerate(value):
        field = f"excluded_addresses.{index}"
        if not isinstance(item, str) or not item.strip() or len(item) > 64:
            raise ApiError(422, "invalid_field", "Each entry is an address or a CIDR range.", field=field)
        try:
            network = ipaddress.ip_network(item.strip(), strict=False)
        except ValueError:
            raise ApiError(
                422,
                "invalid_field",
                f"'{item.strip()[:64]}' is not an address or a CIDR range (like 203.0.113.7 or 10.0.0.0/8).",
                field=field,
            ) from None
        text = str(network.network_address) if network.num_addresses == 1 else str(network)
        if text not in found:
            found.append(text)
    return found


def check_retention(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RETENTION_DAYS:
        raise ApiError(
            422,
            "invalid_field",
            f"Retention is a whole number of days from 1 to {MAX_RETENTION_DAYS}, or null for the "
            "server's setting.",
            field="retention_days",
        )
    return value


def exclusions_of(stored: str | None) -> list[str]:
    """The stored JSON list (never invalid: only ``check_exclusions`` writes it)."""
    if not stored:
        return []
    value = orjson.loads(stored)
    return [str(v) for v in value] if isinstance(value, list) else []


def networks_of(stored: str | None) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(text, strict=False) for text in exclusions_of(stored))


def excluded(address: str | None, networks: tuple[Network, ...]) -> bool:
    """Whether ``address`` (normalised text) is in one of ``networks``."""
    if not networks or not address:
        return False
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(parsed.version == net.version and parsed in net for net in networks)
