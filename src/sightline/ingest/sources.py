"""Where a visit came from: referrer source, UTM tags, and the screen width class.

The stored referrer keeps scheme, host and path only (no query: search terms and tokens stay
private). The referrer source is a friendly name for well-known referrers (``Google``,
``Facebook``, ...: ``sightline.source_names``) or the referrer's host without ``www.``. A
referrer on the page's own host or the site's domain is navigation within the site and no source.
Without an outside referrer, the ``utm_source`` tag names the source. An ad click's id on the
page's address (``gclid``, ``msclkid``, ...: ``channels.CLICK_IDS``) stands for its network's paid
tags (``google`` / ``cpc``) where the event has none, as the ad networks' own auto-tagging
reports it; the id itself is never kept.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from sightline.channels import CLICK_IDS
from sightline.ingest.batch import Utm
from sightline.source_names import source_name

UTM_FIELDS = ("source", "medium", "campaign", "term", "content")
UTM_MAX = 200
NO_UTM: tuple[str | None, ...] = (None,) * 5


@lru_cache(maxsize=8192)
def host_of_url(url: str) -> str | None:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.lower().rstrip(".") if host else None


@lru_cache(maxsize=8192)
def referrer_source(referrer: str, page_host: str | None, site_host: str) -> str | None:
    """The source of ``referrer``, or None when there is none or it is the site itself."""
    if not referrer:
        return None
    host = host_of_url(referrer)
    if host is None:
        return None
    bare = host[4:] if host.startswith("www.") else host
    if host in (page_host, site_host) or bare == site_host:
        return None
    if page_host is not None and bare == (page_host[4:] if page_host.startswith("www.") else page_host):
        return None
    return source_name(host)


@lru_cache(maxsize=8192)
def clean_referrer(referrer: str) -> str | None:
    """The referrer without query, fragment or user info: search terms and tokens stay private."""
    if not referrer:
        return None
    try:
        parts = urlsplit(referrer)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not parts.scheme or not host:
        return None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}"[:2000]


def utm_tags(utm: Utm | None, url: str) -> tuple[str | None, ...]:
    """(source, medium, campaign, term, content): the SDK's ``utm`` object, else the page URL's query."""
    if utm is not None:
        return (
            utm.source or None,
            utm.medium or None,
            utm.campaign or None,
            utm.term or None,
            utm.content or None,
        )
    if "utm_" not in url:
        return NO_UTM
    return _utm_from_url(url)


@lru_cache(maxsize=4096)
def _utm_from_url(url: str) -> tuple[str | None, ...]:
    try:
        query = dict(parse_qsl(urlsplit(url).query))
    except ValueError:
        return NO_UTM
    return tuple((query.get(f"utm_{f}") or "").replace("\x00", "")[:UTM_MAX] or None for f in UTM_FIELDS)


_CLICK_ID = re.compile(r"[?&](" + "|".join(map(re.escape, CLICK_IDS)) + r")=[^&#]")


def with_click_id(url: str, tags: tuple[str | None, ...]) -> tuple[str | None, ...]:
    """``tags`` (source, medium, ...), with an ad click's id on ``url`` standing for its network's
    source and medium when the tags have no medium (``channels.CLICK_IDS``)."""
    if tags[1] is not None or "id=" not in url:  # every click id ends so
        return tags
    found = _CLICK_ID.search(url.partition("#")[0])
    if found is None:
        return tags
    source, medium = CLICK_IDS[found.group(1)]
    return (tags[0] or source, medium, *tags[2:])


Place = tuple[Any, ...]  # (referrer source, referrer, utm source, medium, campaign, term, content)


@lru_cache(maxsize=8192)
def place(url: str, referrer: str, site_host: str, null: Any = None) -> Place:
    """The referrer and UTM columns of an event that has no ``utm`` object, in table order, with
    ``null`` for each absent value (the writer's stand-in for NULL, ``store.null_for``).

    One cached lookup per event: a site's events repeat the same few pages and referrers.
    """
    utm = with_click_id(url, _utm_from_url(url) if "utm_" in url else NO_UTM)
    source = referrer_source(referrer, host_of_url(url) if url else None, site_host) or utm[0]
    return _nulled((source, clean_referrer(referrer), *utm), null)


def place_with_utm(url: str, referrer: str, site_host: str, utm: Utm, null: Any = None) -> Place:
    """As ``place``, for an event whose ``utm`` object (the SDK's) names the campaign."""
    tags = with_click_id(url, utm_tags(utm, url))
    source = referrer_source(referrer, host_of_url(url) if url else None, site_host) or tags[0]
    return _nulled((source, clean_referrer(referrer), *tags), null)


def _nulled(values: tuple[str | None, ...], null: Any) -> Place:
    return values if null is None else tuple(null if v is None else v for v in values)


def language(tag: str | None) -> str | None:
    """A language tag's primary subtag, lower-cased (``pt-BR`` -> ``pt``; ``en`` stays ``en``), or
    None when it is not one (two or three ASCII letters): never a region or anything finer."""
    if not tag:
        return None
    primary = tag.split("-", 1)[0].split("_", 1)[0].strip().lower()
    return primary if 2 <= len(primary) <= 3 and primary.isascii() and primary.isalpha() else None


def first_language(accept_language: str | None) -> str | None:
    """The primary subtag of an ``Accept-Language`` header's first tag (``fr-CH, fr;q=0.9`` -> ``fr``)."""
    if not accept_language:
        return None
    return language(accept_language.split(",", 1)[0].split(";", 1)[0])


def screen_class(width: int | None) -> str | None:
    """Plausible's classes by CSS pixel width: mobile < 576 <= tablet < 992 <= laptop < 1440 <= desktop."""
    if width is None or width <= 0:
        return None
    if width < 576:
        return "mobile"
    if width < 992:
        return "tablet"
    if width < 1440:
        return "laptop"
    return "desktop"
