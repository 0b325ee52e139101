"""The pure rules of ingest: origin matching, referrer sources, user agents, screen classes, field paths."""

from __future__ import annotations

import pytest

from sightline.ingest.agents import client_of
from sightline.ingest.batch import field_path
from sightline.ingest.sources import referrer_source, screen_class
from sightline.sites.lookup import candidate_domains, origin_matches


@pytest.mark.parametrize(
    ("origin", "domain", "matches"),
    [
        ("https://example.com", "example.com", True),
        ("http://example.com", "example.com", True),
        ("https://www.example.com", "example.com", True),
        ("https://WWW.Example.com", "example.com", True),
        ("https://shop.example.com", "example.com", False),
        ("https://example.com.evil.net", "example.com", False),
        ("https://evilexample.com", "example.com", False),
        ("https://example.com:8443", "example.com", False),
        ("https://example.com:443", "example.com", True),
        ("http://localhost:3000", "localhost:3000", True),
        ("http://localhost:3001", "localhost:3000", False),
        ("http://localhost", "localhost:3000", False),
        ("http://[::1]:8080", "[::1]:8080", True),
        ("http://127.0.0.1:8080", "127.0.0.1:8080", True),
        ("null", "example.com", False),
        ("file://", "example.com", False),
        ("ftp://example.com", "example.com", False),
        ("https://user@example.com", "example.com", False),
        ("https://example.com/path", "example.com", False),
    ],
)
def test_an_origin_matches_its_site_s_domain_by_protocol_rules(
    origin: str, domain: str, matches: bool
) -> None:
    assert origin_matches(origin, domain) is matches


def test_a_preflight_origin_is_looked_up_under_every_domain_it_could_belong_to() -> None:
    assert set(candidate_domains("https://www.example.com")) == {
        "www.example.com",
        "example.com",
        "www.example.com:443",
        "example.com:443",
    }
    assert candidate_domains("http://localhost:3000") == ["localhost:3000"]
    assert candidate_domains("null") == []


@pytest.mark.parametrize(
    ("referrer", "source"),
    [
        ("https://www.google.com/", "Google"),
        ("https://www.google.co.uk/search?q=x", "Google"),
        ("https://mail.google.com/mail/u/0/", "Gmail"),
        ("https://t.co/abc", "Twitter"),
        ("https://l.facebook.com/l.php?u=x", "Facebook"),
        ("https://www.blog.example.org/post", "blog.example.org"),
        ("https://shop.test/checkout", None),
        ("https://www.shop.test/checkout", None),
        ("", None),
        ("not a url", None),
        ("android-app://com.slack/", "com.slack"),
    ],
)
def test_a_referrer_becomes_a_source_unless_it_is_the_site_itself(referrer: str, source: str | None) -> None:
    assert referrer_source(referrer, "shop.test", "shop.test") == source


@pytest.mark.parametrize(
    ("user_agent", "expected"),
    [
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.4 Safari/605.1.15",
            ("Safari", "Mac OS X", "desktop"),
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.0 Mobile/15E148 Safari/604.1",
            ("Mobile Safari", "iOS", "tablet"),
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/131.0 Mobile Safari/537.36",
            ("Chrome", "Android", "mobile"),
        ),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
            ("Firefox", "Windows", "desktop"),
        ),
    ],
)
def test_a_user_agent_gives_browser_os_and_device_type(
    user_agent: str, expected: tuple[str, str, str]
) -> None:
    client = client_of(user_agent)
    assert not client.bot
    assert (client.browser, client.os, client.device_type) == expected


def test_a_cubot_phone_is_not_a_bot() -> None:
    ua = (
        "Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/120.0 Mobile Safari/537.36"
    )
    assert not client_of(ua).bot


def test_headless_chrome_is_marked_headless() -> None:
    ua = (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0 "
        "Safari/537.36"
    )
    assert client_of(ua).headless
    assert client_of(ua).browser == "Chrome"


@pytest.mark.parametrize(
    ("width", "kind"),
    [
        (None, None),
        (0, None),
        (375, "mobile"),
        (575, "mobile"),
        (576, "tablet"),
        (991, "tablet"),
        (992, "laptop"),
        (1440, "desktop"),
    ],
)
def test_screen_widths_fall_into_classes(width: int | None, kind: str | None) -> None:
    assert screen_class(width) == kind


def test_a_validation_path_becomes_a_dotted_field_name() -> None:
    assert field_path(".events[3].name") == "events.3.name"
    assert field_path(".events[0].props[...]") == "events.0.props"
    assert field_path(".batch_id") == "batch_id"


@pytest.mark.parametrize("microsecond", [0, 1, 685059])
def test_server_times_are_stored_on_sqlite_as_sqlalchemy_writes_them(microsecond: int) -> None:
    from datetime import UTC, datetime, timedelta

    from sqlalchemy.dialects.sqlite import DATETIME, dialect

    from sightline.ingest.log_writer import _sqlite_time
    from sightline.ingest.times import aware_time, epoch_us, sqlite_times

    moment = datetime(2026, 11, 21, 3, 10, 20, microsecond, tzinfo=UTC)
    processor = DATETIME().bind_processor(dialect())  # type: ignore[no-untyped-call]
    assert processor is not None
    assert _sqlite_time(moment) == processor(moment.replace(tzinfo=None))
    times = sqlite_times()
    assert times(epoch_us(moment)) == processor(moment.replace(tzinfo=None))
    assert times(epoch_us(moment) - 1_000_001) == processor(
        moment.replace(tzinfo=None) - timedelta(seconds=1, microseconds=1)
    )
    assert aware_time(epoch_us(moment)) == moment


@pytest.mark.parametrize(
    ("referrer", "stored"),
    [
        ("https://www.google.com/search?q=my+name", "https://www.google.com/search"),
        ("https://user:secret@blog.example.org:8443/p?token=1#top", "https://blog.example.org:8443/p"),
        ("HTTPS://Example.COM", "https://example.com/"),
        ("", None),
        ("not a url", None),
        ("http://[::1", None),
    ],
)
def test_a_stored_referrer_keeps_only_scheme_host_and_path(referrer: str, stored: str | None) -> None:
    from sightline.ingest.sources import clean_referrer

    assert clean_referrer(referrer) == stored


def test_an_unexpected_failure_of_an_sdk_endpoint_is_answered_in_the_error_shape() -> None:
    import asyncio
    from collections.abc import MutableMapping
    from typing import Any

    import orjson

    from sightline.ingest.service import Guarded

    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("a bug")

    sent: list[dict[str, Any]] = []

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": "POST", "path": "/i/events", "headers": []}
    asyncio.run(Guarded(broken)(scope, receive, send))
    assert sent[0]["status"] == 500
    assert orjson.loads(sent[1]["body"]) == {
        "error": {"code": "internal_error", "message": "Something went wrong; try again."}
    }
