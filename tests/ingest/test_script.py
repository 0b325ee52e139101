"""``GET /analytics.js`` and its siblings: type, ETag/304, gzip, cache lifetime, CORS, names."""

from __future__ import annotations

import gzip
import os
import time

import httpx
import pytest

from tests.ingest.conftest import sdk_dir
from tests.ingest.helpers import SCRIPT_TEXT
from tests.support.http import TLS
from tests.support.server import LiveServer


def get(server: LiveServer, path: str, **headers: str) -> httpx.Response:
    return httpx.get(server.base_url + path, headers=headers)


def test_the_script_is_javascript_cached_briefly_and_open_to_every_origin(ingest_server: LiveServer) -> None:
    response = get(
        ingest_server, "/analytics.js", **{"Accept-Encoding": "identity", "Origin": "https://a.example"}
    )
    assert response.status_code == 200
    assert response.text == SCRIPT_TEXT
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=300"
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "content-encoding" not in response.headers
    assert "content-security-policy" not in response.headers
    assert "x-frame-options" not in response.headers


def test_the_script_is_gzipped_when_the_browser_accepts_it(ingest_server: LiveServer) -> None:
    with (
        httpx.Client(verify=TLS, base_url=ingest_server.base_url) as raw,
        raw.stream("GET", "/analytics.js", headers={"Accept-Encoding": "gzip, deflate, br"}) as response,
    ):
        body = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "gzip"
        assert "Accept-Encoding" in response.headers["vary"]
        assert int(response.headers["content-length"]) == len(body)
    assert gzip.decompress(body).decode() == SCRIPT_TEXT
    assert len(body) < len(SCRIPT_TEXT)
    refused = get(ingest_server, "/analytics.js", **{"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in refused.headers


def test_a_matching_etag_answers_304_without_a_body(ingest_server: LiveServer) -> None:
    first = get(ingest_server, "/analytics.js")
    etag = first.headers["etag"]
    assert etag.startswith('"')
    assert not etag.startswith("W/")
    again = get(ingest_server, "/analytics.js", **{"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert again.headers["cache-control"] == "public, max-age=300"
    assert get(ingest_server, "/analytics.js", **{"If-None-Match": f'"other", W/{etag}'}).status_code == 304
    assert get(ingest_server, "/analytics.js", **{"If-None-Match": '"other"'}).status_code == 200


def test_a_rebuilt_script_gets_a_new_etag(ingest_server: LiveServer) -> None:
    path = sdk_dir(ingest_server) / "analytics-survey.js"
    path.write_text("/* v1 */", "utf-8")
    first = get(ingest_server, "/analytics-survey.js")
    path.write_text("/* version 2 */", "utf-8")
    os.utime(path, (time.time() + 5, time.time() + 5))
    second = get(ingest_server, "/analytics-survey.js")
    assert second.text == "/* version 2 */"
    assert second.headers["etag"] != first.headers["etag"]


def test_lazily_loaded_siblings_are_served_the_same_way(ingest_server: LiveServer) -> None:
    response = get(ingest_server, "/analytics-recording.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize(
    "path",
    [
        "/analytics-missing.js",
        "/analytics-Upper.js",
        "/analytics-a_b.js",
        "/analytics-..%2Fx.js",
        "/analytics-.js",
    ],
)
def test_unknown_or_badly_named_scripts_are_404(ingest_server: LiveServer, path: str) -> None:
    response = get(ingest_server, path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_head_answers_the_headers_only(ingest_server: LiveServer) -> None:
    response = httpx.head(ingest_server.base_url + "/analytics.js")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["etag"]
