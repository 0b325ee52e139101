"""The name a source goes by: a friendly name for well-known referrers' hosts (``Google``,
``Facebook``, ``ChatGPT``, ...) or the host without ``www.``.

One table for every place a source is named: ingest names live visits' referrers with it
(``ingest.sources``) and imported history's sources are named with it when reports read them
(``imports.figures``), so one source is one row whichever way its visits came. Imports nothing
from the rest of Sightline.
"""

from __future__ import annotations

import re
from functools import lru_cache

KNOWN_SOURCES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), name)
    for pattern, name in (
        (r"(^|\.)mail\.google\.com$", "Gmail"),
        (r"^(gemini|bard)\.google\.com$", "Gemini"),
        (r"(^|\.)google(\.com?)?\.[a-z]{2,3}$|^google\.com$", "Google"),
        (r"(^|\.)bing\.com$", "Bing"),
        (r"(^|\.)duckduckgo\.com$", "DuckDuckGo"),
        (r"(^|\.)search\.yahoo\.|(^|\.)yahoo\.com$", "Yahoo!"),
        (r"(^|\.)yandex\.[a-z.]+$|(^|\.)ya\.ru$", "Yandex"),
        (r"(^|\.)baidu\.com$", "Baidu"),
        (r"(^|\.)ecosia\.org$", "Ecosia"),
        (r"(^|\.)search\.brave\.com$", "Brave Search"),
        (r"(^|\.)startpage\.com$", "Startpage"),
        (r"(^|\.)qwant\.com$", "Qwant"),
        (r"(^|\.)(facebook\.com|fb\.me|fb\.com)$", "Facebook"),
        (r"(^|\.)instagram\.com$", "Instagram"),
        (r"^t\.co$|(^|\.)twitter\.com$|(^|\.)x\.com$", "Twitter"),
        (r"(^|\.)linkedin\.com$|^lnkd\.in$", "LinkedIn"),
        (r"(^|\.)reddit\.com$", "Reddit"),
        (r"(^|\.)youtube\.com$|^youtu\.be$", "YouTube"),
        (r"^news\.ycombinator\.com$", "Hacker News"),
        (r"(^|\.)github\.com$", "GitHub"),
        (r"(^|\.)pinterest\.[a-z.]+$", "Pinterest"),
        (r"(^|\.)tiktok\.com$", "TikTok"),
        (r"(^|\.)mastodon\.social$", "Mastodon"),
        (r"(^|\.)bsky\.app$", "Bluesky"),
        (r"(^|\.)wikipedia\.org$", "Wikipedia"),
        (r"(^|\.)chatgpt\.com$|(^|\.)openai\.com$", "ChatGPT"),
        (r"(^|\.)perplexity\.ai$", "Perplexity"),
        (r"(^|\.)outlook\.(live|office)\.com$", "Outlook"),
    )
)


@lru_cache(maxsize=8192)
def source_name(host: str) -> str:
    bare = host[4:] if host.startswith("www.") else host
    for pattern, name in KNOWN_SOURCES:
        if pattern.search(bare):
            return name
    return bare[:255]


@lru_cache(maxsize=8192)
def named(value: str) -> str:
    """A source value as another tool stored it (a host such as ``www.google.com``, or already a
    name such as ``Google`` or a ``utm_source`` tag), named as live visits are: a host goes through
    ``source_name``; anything else stays as it is."""
    if "." not in value or any(c.isspace() or c in "/:?#" for c in value):
        return value
    return source_name(value.lower())
