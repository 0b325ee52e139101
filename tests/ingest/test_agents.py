"""Bot detection against the lists it is built from: every example agent of the maintained crawler
list is a bot, the automation tools it leaves out are caught by Sightline's own list, and the
browsers people use are not bots."""

from __future__ import annotations

import pytest
from crawleruseragents import CRAWLER_USER_AGENTS_DATA

from sightline.ingest.agents import OWN_PATTERN, client_of

BROWSERS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 "
    "Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.6 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile "
    "Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36 Edg/131.0.0.0",
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 "
    "Chrome/122.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36 OPR/115.0.0.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Mobile/15E148 [FBAN/FBIOS;FBAV/480.0]",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Mobile/15E148 Instagram 350.0",
    "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile "
    "Safari/537.36 DuckDuckGo/5",
    "Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile "
    "Safari/537.36",
]
# Tools the maintained list does not name, each caught by OWN_PATTERN alone.
OWN = [
    "Java/17.0.1",
    "undici",
    "PostmanRuntime/7.36.0",
    "insomnia/8.0",
    "wrk/4.2.0",
    "ApacheBench/2.3",
    "k6/0.49.0 (https://k6.io/)",
    "Locust/2.20",
    "Mozilla/5.0 (compatible; Lighthouse)",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 "
    "puppeteer",
    "NewRelicPinger/1.0",
    "LinkPreview/1.0",
    "cypress/13.6",
    "playwright/1.45",
]


def test_every_example_agent_of_the_maintained_crawler_list_is_a_bot() -> None:
    examples = [
        agent
        for entry in CRAWLER_USER_AGENTS_DATA
        if entry["pattern"] != "HeadlessChrome"
        for agent in entry.get("instances", [])
    ]
    assert len(examples) > 2000
    missed = [agent for agent in examples if not client_of(agent).bot]
    assert missed == []


@pytest.mark.parametrize("agent", BROWSERS)
def test_the_browsers_people_use_are_not_bots(agent: str) -> None:
    client = client_of(agent)
    assert not client.bot
    assert not client.headless
    assert client.browser is not None


@pytest.mark.parametrize("agent", OWN)
def test_automation_and_load_tools_the_list_leaves_out_are_bots_by_sightlines_own_list(agent: str) -> None:
    assert OWN_PATTERN.search(agent) is not None
    assert client_of(agent).bot


def test_a_headless_browser_is_left_to_the_operator_not_called_a_crawler() -> None:
    agent = (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0 "
        "Safari/537.36"
    )
    client = client_of(agent)
    assert client.headless
    assert not client.bot
