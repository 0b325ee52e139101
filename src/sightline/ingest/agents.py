"""User agents: browser, operating system and device type through ua-parser, and bot detection.

A request is a bot when it has no user agent, when ua-parser calls its device a ``Spider``, when
its user agent matches the maintained crawler list of ``crawler-user-agents`` (about 1,500
patterns of crawlers, monitors, previewers and HTTP libraries), or when it matches ``OWN_PATTERN``:
the automation and load-testing tools that list leaves out. Headless browsers are decided by the
operator (``--ingest-accept-headless``), not by the list (its ``HeadlessChrome`` entry is left out):
they count as bots unless accepted. Results are cached per user-agent string: real traffic has few
distinct ones. ``docs/ingest.md`` says what each list catches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import re2
import ua_parser
from crawleruseragents import CRAWLER_USER_AGENTS_DATA

# The maintained list's patterns, less its headless-browser entry (the operator decides those), as
# one RE2 automaton: Python's re tries 1,500 alternatives one by one (1.8 ms per new user agent on
# this project's 2-core machine under load), RE2 matches them in one pass (25 µs).
_RE2 = re2.Options()
_RE2.max_mem = 64 * 2**20
LISTED_PATTERN = re2.compile(
    "|".join(entry["pattern"] for entry in CRAWLER_USER_AGENTS_DATA if entry["pattern"] != "HeadlessChrome"),
    _RE2,
)
# Automation, testing and load tools the maintained list does not name (measured: docs/ingest.md).
OWN_PATTERN = re.compile(
    r"selenium|webdriver|puppeteer|playwright|cypress|phantomjs|slimerjs|lighthouse|"
    r"newrelic|linkpreview|^java/|^undici|^postmanruntime|^insomnia|^wrk/|^ab/|^apachebench|^k6/|^locust",
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


def is_listed(user_agent: str) -> bool:
    """Whether the maintained crawler list or Sightline's own automation list names this agent."""
    return LISTED_PATTERN.search(user_agent) is not None or OWN_PATTERN.search(user_agent) is not None


@lru_cache(maxsize=8192)
def client_of(user_agent: str) -> Client:
    if not user_agent.strip():
        return Client(None, None, None, bot=True, headless=False)
    parsed = ua_parser.parse(user_agent)
    device = parsed.device
    if (device is not None and device.family == "Spider") or is_listed(user_agent):
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
