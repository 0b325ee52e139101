"""The no-JavaScript pixel from a real HTTP client: a pageview counted cookieless with the
request's referrer, address and user agent, and always the same 1x1 GIF, whatever happened."""

from __future__ import annotations

import base64

import httpx
import pytest

from sightline.database import Database
from tests.ingest.helpers import CHROME, Site, dropped, stored
from tests.support.http import TLS
from tests.support.server import LiveServer

GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")


def _pixel(server: LiveServer, params: dict[str, str], **headers: str) -> httpx.Response:
    with httpx.Client(verify=TLS, base_url=server.base_url, timeout=30) as client:
        return client.get("/i/pixel.gif", params=params, headers={"User-Agent": CHROME, **headers})


def _is_the_gif(response: httpx.Response) -> None:
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/gif"
    assert "no-store" in response.headers["cache-control"]
    assert response.content == GIF


def test_a_pixel_counts_a_cookieless_pageview_of_its_path_with_the_requests_referrer(
    ingest_server: LiveServer, site: Site, ingest_db: Database
) -> None:
    response = _pixel(
        ingest_server, {"key": site.key, "path": "/pricing"}, Referer="https://news.example.org/post"
    )
    _is_the_gif(response)
    rows = stored(ingest_db, site)
    assert len(rows) == 1
    row = rows[0]
    assert (row.name, row.path, row.referrer_source, row.browser) == (
        "pageview",
        "/pricing",
        "news.example.org",
        "Chrome",
    )
    assert row.visitor_id not in ("-", "")  # worked out on the server, as for a cookieless site
    _is_the_gif(_pixel(ingest_server, {"key": site.key, "path": "/docs"}))
    again = stored(ingest_db, site)
    assert len(again) == 2
    assert again[1].visitor_id == row.visitor_id  # the same browser and address: one visitor
    assert again[1].session_id == row.session_id


def test_without_a_path_the_pixel_counts_the_page_that_showed_it(
    ingest_server: LiveServer, site: Site, ingest_db: Database
) -> None:
    _is_the_gif(_pixel(ingest_server, {"key": site.key}, Referer=f"http://{site.domain}/blog/hello?x=1"))
    rows = stored(ingest_db, site)
    assert [(r.path, r.referrer_source) for r in rows] == [("/blog/hello", None)]  # its own page: no source


@pytest.mark.parametrize(
    ("params", "headers", "reason"),
    [
        ({"key": "no-such-key"}, {}, "unknown_site"),
        ({}, {}, None),
        ({"key": "KEY"}, {"User-Agent": "curl/8.5.0"}, "bot"),
        ({"key": "KEY", "path": "/x"}, {"Referer": "https://0-0.fr/"}, "referrer_spam"),
        ({"key": "KEY", "path": "/" + "x" * 2001}, {}, None),
    ],
)
def test_whatever_happens_the_pixel_answers_the_gif_and_stores_nothing_it_should_not(
    ingest_server: LiveServer,
    site: Site,
    ingest_db: Database,
    ingest_owner: httpx.Client,
    params: dict[str, str],
    headers: dict[str, str],
    reason: str | None,
) -> None:
    params = {k: site.key if v == "KEY" else v for k, v in params.items()}
    before = dropped(ingest_owner)
    _is_the_gif(_pixel(ingest_server, params, **headers))
    assert stored(ingest_db, site) == []
    if reason is not None:
        assert dropped(ingest_owner)[reason] == before[reason] + 1


def test_other_methods_get_the_gif_and_count_nothing(
    ingest_server: LiveServer, site: Site, ingest_db: Database
) -> None:
    with httpx.Client(verify=TLS, base_url=ingest_server.base_url, timeout=30) as client:
        head = client.head("/i/pixel.gif", params={"key": site.key}, headers={"User-Agent": CHROME})
        post = client.post("/i/pixel.gif", params={"key": site.key}, headers={"User-Agent": CHROME})
    assert head.status_code == 200
    assert head.content == b""
    _is_the_gif(post)
    assert stored(ingest_db, site) == []
