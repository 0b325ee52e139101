"""The console's static files travel gzip-encoded (compressed once, by the build) to browsers that
accept it, and plain to the rest, with their caching and revalidation intact."""

from __future__ import annotations

import asyncio
import gzip
import os
import re
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from sightline.web.assets import IMMUTABLE, StaticAssets, accepts_gzip
from sightline.web.pages import CONSOLE
from tests.support.http import TLS
from tests.support.server import LiveServer

GZIP = {"Accept-Encoding": "gzip, deflate, br, zstd"}
IDENTITY = {"Accept-Encoding": "identity"}


def first_load_assets(server: LiveServer) -> list[str]:
    html = httpx.get(server.base_url + "/sites").text
    assets = re.findall(r'(?:src|href)="(/static/console/[^"]+\.(?:js|css)(?:\?v=[0-9a-f]+)?)"', html)
    assert len(assets) >= 4, html
    return assets


def fetch_raw(
    server: LiveServer, path: str, headers: dict[str, str], method: str = "GET"
) -> tuple[httpx.Response, bytes]:
    """The response and its bytes exactly as sent (httpx would otherwise decode them)."""
    with (
        httpx.Client(verify=TLS, base_url=server.base_url) as client,
        client.stream(method, path, headers=headers) as response,
    ):
        return response, b"".join(response.iter_raw())


def on_disk(asset: str) -> bytes:
    return (CONSOLE / asset.split("?")[0].removeprefix("/static/console/")).read_bytes()


def vary(response: httpx.Response) -> list[str]:
    return [item.strip().lower() for item in response.headers.get("vary", "").split(",")]


def test_console_assets_are_sent_gzip_encoded_and_decode_to_the_built_bytes(
    console_server: LiveServer,
) -> None:
    for asset in first_load_assets(console_server):
        response, body = fetch_raw(console_server, asset, GZIP)
        assert response.status_code == 200, asset
        assert response.headers["content-encoding"] == "gzip", asset
        assert "accept-encoding" in vary(response), asset
        assert int(response.headers["content-length"]) == len(body), asset
        assert gzip.decompress(body) == on_disk(asset), asset
        assert len(body) < len(on_disk(asset)), asset
        assert response.headers["cache-control"] == IMMUTABLE, asset
        assert response.headers["content-type"].startswith(("text/javascript", "text/css")), asset


@pytest.mark.parametrize("accept", ["identity", "gzip;q=0, br", ""])
def test_console_assets_are_sent_plain_when_gzip_is_not_accepted(
    console_server: LiveServer, accept: str
) -> None:
    for asset in first_load_assets(console_server):
        response, body = fetch_raw(console_server, asset, {"Accept-Encoding": accept})
        assert response.status_code == 200, asset
        assert "content-encoding" not in response.headers, asset
        assert "accept-encoding" in vary(response), asset
        assert int(response.headers["content-length"]) == len(body), asset
        assert body == on_disk(asset), asset
        assert response.headers["cache-control"] == IMMUTABLE, asset


def test_each_encoding_revalidates_with_its_own_etag(console_server: LiveServer) -> None:
    asset = next(a for a in first_load_assets(console_server) if "/app.js" in a)
    zipped, _ = fetch_raw(console_server, asset, GZIP)
    plain, _ = fetch_raw(console_server, asset, IDENTITY)
    assert zipped.headers["etag"] != plain.headers["etag"]
    for headers, etag in ((GZIP, zipped.headers["etag"]), (IDENTITY, plain.headers["etag"])):
        response, body = fetch_raw(console_server, asset, {**headers, "If-None-Match": etag})
        assert response.status_code == 304
        assert body == b""
        assert response.headers["etag"] == etag
        assert "accept-encoding" in vary(response)
        assert response.headers["cache-control"] == IMMUTABLE
    # The other encoding's tag does not match: the browser gets the variant it asked for.
    response, body = fetch_raw(console_server, asset, {**GZIP, "If-None-Match": plain.headers["etag"]})
    assert response.status_code == 200
    assert gzip.decompress(body) == on_disk(asset)


def test_a_head_request_names_the_encoded_length_without_a_body(console_server: LiveServer) -> None:
    asset = "/static/console/console.css"
    _, sent = fetch_raw(console_server, asset, GZIP)
    response, body = fetch_raw(console_server, asset, GZIP, method="HEAD")
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert int(response.headers["content-length"]) == len(sent) < len(on_disk(asset))
    assert body == b""
    assert response.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("gzip, deflate, br, zstd", True),
        ("GZIP", True),
        ("br;q=1.0, gzip;q=0.8", True),
        ("deflate, *;q=0.5", True),
        ("*", True),
        ("gzip;q=0", False),
        ("gzip;q=0.000, *", False),
        ("*;q=0", False),
        ("identity", False),
        ("br", False),
        ("", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_accept_encoding_is_read_with_its_quality_values(header: str, expected: bool) -> None:
    assert accepts_gzip(header) is expected


def test_a_compressed_copy_older_than_its_file_is_not_served(tmp_path: Path) -> None:
    (tmp_path / "app.js").write_text("console.log('rebuilt');")
    (tmp_path / "app.js.gz").write_bytes(gzip.compress(b"console.log('old');"))
    stat = (tmp_path / "app.js").stat()
    os.utime(tmp_path / "app.js.gz", ns=(stat.st_atime_ns, stat.st_mtime_ns - 10**9))
    app = Starlette(routes=[Mount("/static", StaticAssets(directory=tmp_path))])

    async def fetch() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(verify=TLS, transport=transport, base_url="http://console") as client:
            return await client.get("/static/app.js", headers=GZIP)

    response = asyncio.run(fetch())
    assert response.status_code == 200
    assert "content-encoding" not in response.headers
    assert response.text == "console.log('rebuilt');"
