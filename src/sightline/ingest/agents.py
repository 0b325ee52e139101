"""User agents: browser, operating system and device type through ua-parser, and bot detection.

A request is a bot when ua-parser calls its device a ``Spider``, when its user agent matches the
known-bot and automation pattern list below, or when it has no user agent at all. Headless
browsers count as bots unless the operator accepts them (``--ingest-accept-headless``).
Results are cached per user-agent string: real traffic has few distinct ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import ua_parser

# Crawlers, monitors, HTTP libraries and automation tools that do not call themselves Spider.
BOT_PATTERN = re.compile(
    r"(?<!cu)bot\b|bot[/_-]|crawl|spider|slurp|archiver|scrap|fetcher|indexer|"
    r"facebookexternalhit|embedly|linkpreview|mediapartners|adsbot|"
    r"lighthouse|pagespeed|gtmetrix|pingdom|uptime|statuscake|site24x7|newrelic|datadog|"
    r"selenium|webdriver|puppeteer|playwright|cypress|phantomjs|slimerjs|"
    r"^curl/|^wget/|^python|^java/|^go-http-client|^okhttp|^axios|^node-fetch|^undici|^httpx|"
    r"^aiohttp|^libwww|^apache-httpclient|^postmanruntime|^insomnia|^wrk|^ab/|^k6/|^locust",
    re.IGNORECASE,
)
HEADLESS_PATTERN = re.compile(r"headless", re.IGNORECASE)

MOBILE_OS = frozenset({"iOS", "Android", "Windows Phone", "BlackBerry OS", "KaiOS", "Firefox OS", "Tizen"})
DESKTOP_OS = frozenset(
    {
        "Windows",
        "Mac OS X",
        "macOS",
        "Linux",
        "Ubuntu",
        "Fedora",
        "Debian",
        "Chrome OS",
        "ChromeOS",
        "FreeBSD",
        "OpenBSD",
        "NetBSD",
        "Red Hat",
        "openSUSE",
        "Arch Linux",
    }
)


@dataclass(frozen=True, slots=True)
class Client:
    browser: str | None
    os: str | None
    device_type: str | None  # desktop, mobile, tablet
    bot: bool
    headless: bool


@lru_cache(maxsize=8192)
def client_of(user_agent: str) -> Client:
    if not user_agent.strip():
        return Client(None, None, None, bot=True, headless=False)
    parsed = ua_parser.parse(user_agent)
    device = parsed.device
    if (device is not None and device.family == "Spider") or BOT_PATTERN.search(user_agent):
        return Client(None, None, None, bot=True, headless=False)
    headless = HEADLESS_PATTERN.search(user_agent) is not None
    browser = parsed.user_agent.family if parsed.user_agent is not None else None
    if browser == "HeadlessChrome":
        browser = "Chrome"
    os_family = parsed.os.family if parsed.os is not None else None
    return Client(
        browser=_known(browser),
        os=_known(os_family),
        device_type=_device_type(user_agent, os_family, device.family if device else None, device),
        bot=False,
        headless=headless,
    )


def _known(family: str | None) -> str | None:
    return None if family in (None, "Other") else family


def _device_type(user_agent: str, os_family: str | None, family: str | None, device: object) -> str | None:
    brand = getattr(device, "brand", None) or ""
    if family == "iPad" or "Tablet" in brand or "Tablet" in (family or "") or "Kindle" in (family or ""):
        return "tablet"
    if os_family == "Android" and "Mobile" not in user_agent:
        return "tablet"
    if os_family in MOBILE_OS or "Mobi" in user_agent:
        return "mobile"
    if os_family in DESKTOP_OS:
        return "desktop"
    return None


def warm_up() -> None:
    """Load ua-parser's rules now rather than on the first request (it takes ~0.1 s)."""
    client_of(
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
    )
