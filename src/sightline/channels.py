"""Channels: a visit's sources grouped as owners think of them, and the one table of their rules.

A visit's channel follows from what the store already keeps of it: its source (the referrer's
name or host, else its ``utm_source``; ``(none)`` without either), its ``utm_source`` and its
``utm_medium``. The rules below are tried in order and the first that matches names the channel,
after Google Analytics 4's default channel group and Plausible's (AI assistants first, and the
eight channels of PRODUCT.md instead of their longer list). Every test is on lower-cased values.

The store's feed turns the rules into one SQL expression (``SQL``, the same on DuckDB and
ClickHouse) and writes each visit's channel once, as a column of its visit and of its events that
reports read; the same SQL fills the column of a store made before it (``store.upgrade``).
Imports (Plausible's sources) use ``classify``; ingest reads ``CLICK_IDS`` (an ad click's id on
the landing page counts as its network's paid tags); ``docs/reports.md`` carries
``markdown_table`` (a test fails when it drifts: ``scripts/docs_tables.py`` writes it). Imports
nothing else from Sightline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The API's values and the console's names, in the order the docs list them.
CHANNELS: dict[str, str] = {
    "direct": "Direct",
    "organic_search": "Organic search",
    "paid_search": "Paid search",
    "organic_social": "Organic social",
    "paid_social": "Paid social",
    "email": "E-mail",
    "referral": "Referral",
    "ai_assistants": "AI assistants",
}
NONE = "(none)"  # the store's source of a visit without referrer or utm_source

AI_ASSISTANTS = (
    "chatgpt", "chatgpt.com", "chat.openai.com", "openai", "openai.com",
    "perplexity", "perplexity.ai",
    "claude", "claude.ai",
    "gemini", "gemini.google.com", "bard.google.com",
    "copilot", "copilot.microsoft.com", "copilot.cloud.microsoft",
    "deepseek", "chat.deepseek.com",
    "mistral", "chat.mistral.ai",
    "grok", "grok.com",
    "meta.ai", "poe.com", "you.com", "phind.com", "chat.qwen.ai", "kimi.com",
)  # fmt: skip
SEARCH_ENGINES = (
    "google", "bing", "duckduckgo", "yahoo", "yahoo!", "yandex", "baidu", "ecosia", "brave search",
    "startpage", "qwant", "search.brave.com", "search.yahoo.com", "search.aol.com", "aol", "ask.com",
    "naver", "search.naver.com", "seznam", "search.seznam.cz", "sogou", "sogou.com", "so.com",
    "kagi.com", "yandex.ru", "ya.ru", "daum", "search.daum.net", "mojeek.com", "presearch.com",
    "google.com", "bing.com", "duckduckgo.com", "yahoo.com", "yandex.com", "baidu.com", "ecosia.org",
)  # fmt: skip
SOCIAL_NETWORKS = (
    "facebook", "fb", "facebook.com", "instagram", "ig", "instagram.com", "twitter", "x", "x.com",
    "t.co", "linkedin", "lnkd.in", "linkedin.com", "reddit", "reddit.com", "youtube", "youtube.com",
    "pinterest", "tiktok", "tiktok.com", "mastodon", "bluesky", "bsky.app", "hacker news",
    "news.ycombinator.com", "github", "threads", "threads.net", "threads.com", "tumblr.com",
    "vk.com", "weibo.com", "quora.com", "medium.com", "discord.com", "telegram", "t.me",
    "whatsapp", "slack", "snapchat", "twitch.tv", "producthunt.com", "lemmy.world", "xing.com",
)  # fmt: skip
EMAIL_SOURCES = (
    "gmail", "outlook", "email", "e-mail", "e_mail", "e mail", "newsletter", "mail.yahoo.com",
    "mail.proton.me", "mail.aol.com", "mail.zoho.com", "webmail", "mailchimp", "substack",
)  # fmt: skip
EMAIL_MEDIUMS = ("email", "e-mail", "e_mail", "e mail", "newsletter")
SOCIAL_MEDIUMS = ("social", "social-network", "social-media", "sm", "social network", "social media")
PAID_SOCIAL_MEDIUMS = (
    "paid_social",
    "paidsocial",
    "paid-social",
    "paid social",
    "social_paid",
    "social-paid",
)
# Paid traffic's mediums, as GA4 reads them (cpc, ppc, cpm, paid..., retargeting) and display ads.
PAID_MEDIUMS = ("ppc", "retargeting", "display", "banner", "interstitial")
PAID_MEDIUM_PATTERNS = ("%cp%", "paid%")  # SQL LIKE patterns: contains "cp", starts with "paid"
# An ad click's id on the landing page's address: the network's paid tags when the page has none
# (Google's auto-tagging reports such a visit as google / cpc). Only their presence counts.
CLICK_IDS: dict[str, tuple[str, str]] = {
    "gclid": ("google", "cpc"),
    "gbraid": ("google", "cpc"),
    "wbraid": ("google", "cpc"),
    "dclid": ("google", "cpc"),
    "msclkid": ("bing", "cpc"),
    "ttclid": ("tiktok", "cpc"),
    "twclid": ("twitter", "cpc"),
    "li_fat_id": ("linkedin", "cpc"),
}

SOURCES = ("source", "utm_source")  # a visit's source, or its utm_source
MEDIUM = ("utm_medium",)


@dataclass(frozen=True)
class Test:
    """One test: a value of ``fields`` (any of them) is one of ``values`` or matches one of
    ``patterns`` (SQL LIKE, ``%`` any run of characters)."""

    fields: tuple[str, ...]
    values: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    says: str = ""  # how the docs name the list


@dataclass(frozen=True)
class Rule:
    """A channel and when a visit belongs to it: any of ``when``, each a set of tests that all hold."""

    channel: str
    when: tuple[tuple[Test, ...], ...]


AI = Test(SOURCES, AI_ASSISTANTS, says="an AI assistant")
SOCIAL = Test(SOURCES, SOCIAL_NETWORKS, says="a social network")
SEARCH = Test(SOURCES, SEARCH_ENGINES, says="a search engine")
PAID = Test(MEDIUM, PAID_MEDIUMS, PAID_MEDIUM_PATTERNS, says="paid")
RULES: tuple[Rule, ...] = (
    Rule("ai_assistants", ((AI,),)),
    # Paid first: few visits have a paid medium, so few are searched for in the social list.
    Rule("paid_social", ((Test(MEDIUM, PAID_SOCIAL_MEDIUMS, says="paid social"),), (PAID, SOCIAL))),
    Rule("paid_search", ((PAID,),)),
    Rule(
        "email",
        (
            (Test(SOURCES, EMAIL_SOURCES, says="an e-mail service"),),
            (Test(MEDIUM, EMAIL_MEDIUMS, says="e-mail"),),
        ),
    ),
    Rule("organic_social", ((SOCIAL,), (Test(MEDIUM, SOCIAL_MEDIUMS, says="social"),))),
    Rule("organic_search", ((SEARCH,), (Test(MEDIUM, ("organic",), says="organic"),))),
    Rule("direct", ((Test(("source",), (NONE,), says="none"), Test(MEDIUM, ("",), says="none")),)),
)
OTHERWISE = "referral"  # every other visit: an outside referrer or a utm_source no rule names

_NAMES = {"source": "source", "utm_source": "utm_source", "utm_medium": "utm_medium"}


def _like(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if ch == "%" else re.escape(ch) for ch in pattern), re.DOTALL)


def _holds(test: Test, values: dict[str, str]) -> bool:
    for name in test.fields:
        value = values[name].lower()
        if value in test.values or any(_like(p).fullmatch(value) for p in test.patterns):
            return True
    return False


def classify(source: str | None, utm_source: str | None = None, utm_medium: str | None = None) -> str:
    """The channel of a visit with this source (``None`` or empty: ``(none)``) and UTM tags."""
    values = {"source": source or NONE, "utm_source": utm_source or "", "utm_medium": utm_medium or ""}
    for rule in RULES:
        if any(all(_holds(test, values) for test in tests) for tests in rule.when):
            return rule.channel
    return OTHERWISE


def _literal(value: str) -> str:
    if "'" in value or "\\" in value:
        raise ValueError(f"a channel rule's value may not hold quotes: {value!r}")
    return f"'{value}'"


def _test_sql(test: Test) -> str:
    """A test as SQL. A long list is one search for ``|value|`` in the list written as one string
    (a value holding ``|`` is in no list): an engine compares an ``IN`` list's values one by one
    on every row, six times the cost at 45 values (docs/performance.md, "Channels"). The tests
    of a rule run in order, each on the rows the ones before let through."""
    parts = []
    for name in test.fields:
        column = f"lower({_NAMES[name]})"
        if len(test.values) > 4:
            if any("|" in value for value in test.values):
                raise ValueError(f"a channel rule's value may not hold '|': {test.values!r}")
            listed = _literal("|" + "|".join(test.values) + "|")
            found = f"position('|' || {column} || '|' IN {listed}) > 0"
            # An empty value (most visits' utm_source) is in no list: no search.
            parts.append(f"({_NAMES[name]} != '' AND {found} AND position('|' IN {column}) = 0)")
        elif test.values:
            parts.append(f"{column} IN ({', '.join(map(_literal, test.values))})")
        parts.extend(f"{column} LIKE {_literal(p)}" for p in test.patterns)
    return "(" + " OR ".join(parts) + ")"


def _build_sql() -> str:
    cases = []
    for rule in RULES:
        when = " OR ".join("(" + " AND ".join(_test_sql(t) for t in tests) + ")" for tests in rule.when)
        cases.append(f"WHEN {when} THEN '{rule.channel}'")
    return f"(CASE {' '.join(cases)} ELSE '{OTHERWISE}' END)"


# The channel of the row of a visit (or of an event, which carries its visit's attributes), as SQL.
SQL = _build_sql()


def _describe(test: Test) -> str:
    field = "source or utm_source" if test.fields == SOURCES else " or ".join(test.fields)
    if test.says == "none":
        return f"{field} is `{test.values[0]}`" if test.values[0] else f"{field} is empty"
    if len(test.values) + len(test.patterns) > 8:
        return f"{field} is {test.says}"
    listed = [f"`{v}`" for v in test.values] + [
        "contains `cp`" if p == "%cp%" else "starts with `paid`" for p in test.patterns
    ]
    return f"{field} is {test.says} ({', '.join(listed)})"


def _lists() -> list[str]:
    """The long lists the table names, written out."""
    out = []
    for test in (AI, SEARCH, SOCIAL, Test(SOURCES, EMAIL_SOURCES, says="an e-mail service")):
        out.append(f"- *{test.says}*: " + ", ".join(f"`{v}`" for v in test.values))
    out.append(
        "- *paid*: "
        + ", ".join(f"`{v}`" for v in PAID_MEDIUMS)
        + ", or it contains `cp` or starts with `paid`"
    )
    out.append(
        "- *an ad click's id* on the landing page, with no `utm_medium`: "
        + ", ".join(f"`{k}` ({s} / {m})" for k, (s, m) in CLICK_IDS.items())
    )
    return out


def markdown_table() -> str:
    """The rules as docs/reports.md lists them (``scripts/docs_tables.py``)."""
    rows = ["| Channel | Value | A visit whose ... (the first rule that holds) |", "|---|---|---|"]
    for rule in RULES:
        when = " *or* ".join(" and ".join(_describe(t) for t in tests) for tests in rule.when)
        rows.append(f"| {CHANNELS[rule.channel]} | `{rule.channel}` | {when} |")
    rows.append(
        f"| {CHANNELS[OTHERWISE]} | `{OTHERWISE}` | any other source (an outside referrer, a utm_source) |"
    )
    return "\n".join([*rows, "", *_lists()])
