"""Referrer spam: hosts whose "visits" are advertising, never people.

Two lists decide: the public-domain community list shipped in ``data/referrer-spam.txt`` (or the
operator's newer copy, ``--referrer-spam-list``), and each site's own ``blocked_referrers``. A
referrer is spam when its host or any parent domain of it is on either (``ru.spam.example`` is
caught by ``spam.example``). Ingest drops such batches as ``referrer_spam`` (202, nothing stored).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from sightline.errors import ApiError
from sightline.sites.domains import DomainError, normalise_domain

SHIPPED = Path(__file__).with_name("data") / "referrer-spam.txt"
MAX_BLOCKED = 200


def read_list(path: Path) -> frozenset[str]:
    """The hosts of a spam list file: one a line, lowercased; blank lines and ``#`` comments skipped."""
    hosts = set()
    for line in path.read_text("utf-8").splitlines():
        host = line.strip().lower().rstrip(".")
        if host and not host.startswith("#"):
            hosts.add(host)
    return frozenset(hosts)


@lru_cache(maxsize=4)
def spam_list(path: str | None = None) -> frozenset[str]:
    """The list ingest uses: the operator's file, or the shipped one."""
    return read_list(Path(path) if path else SHIPPED)


@lru_cache(maxsize=8192)
def host_of_referrer(referrer: str) -> str | None:
    """The lowercased host of a referrer URL; None when it has none. Cached: referrers repeat."""
    if not referrer:
        return None
    try:
        host = urlsplit(referrer).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


@lru_cache(maxsize=8192)
def _names(host: str) -> tuple[str, ...]:
    """``host`` and each of its parent domains: ``a.b.c``, ``b.c``, ``c``."""
    labels = host.split(".")
    return tuple(".".join(labels[i:]) for i in range(len(labels)))


def listed(host: str, *lists: frozenset[str]) -> bool:
    """Whether ``host`` or one of its parent domains is on any of ``lists``."""
    names = _names(host)
    return any(hosts and not hosts.isdisjoint(names) for hosts in lists)


def check_blocked(value: object) -> list[str]:
    """A site's ``blocked_referrers``: up to 200 host names (as a site's domain is written)."""
    if not isinstance(value, list):
        raise ApiError(422, "invalid_field", "Give a list of host names.", field="blocked_referrers")
    if len(value) > MAX_BLOCKED:
        message = f"At most {MAX_BLOCKED} referrer hosts can be blocked."
        raise ApiError(422, "invalid_field", message, field="blocked_referrers")
    hosts: list[str] = []
    for index, raw in enumerate(value):
        field = f"blocked_referrers.{index}"
        text = raw.strip().lower() if isinstance(raw, str) else raw
        if isinstance(text, str) and "://" in text:  # a pasted URL: its host is what is meant
            text = host_of_referrer(text) or text
        try:
            host = normalise_domain(text)
        except DomainError:
            message = f"“{raw}” is not a host name; write it as spam.example, without a path."
            raise ApiError(422, "invalid_field", message, field=field) from None
        if host not in hosts:
            hosts.append(host)
    return hosts


def blocked_of(stored: str | None) -> list[str]:
    return list(orjson.loads(stored)) if stored else []
