"""The HTML the server sends for the console: one shell at every client-side route, strict headers."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest

from sightline.web import pages
from sightline.web.headers import CSP
from tests.support.server import LiveServer

CONSOLE_ROUTES = ["/login", "/sites", "/sites/12", "/sites/12/anything", "/health"]


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


@pytest.mark.parametrize("path", CONSOLE_ROUTES)
def test_every_console_route_serves_the_application_shell_under_the_strict_policy(
    console_server: LiveServer, path: str
) -> None:
    response = httpx.get(console_server.base_url + path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-cache"
    tags = tags_of(response.text)
    assert ("div", {"id": "app"}) in tags
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert scripts, "the shell loads no script"
    assert all(attrs.get("src") for attrs in scripts), "inline scripts would be blocked by the CSP"
    assert not [tag for tag, _ in tags if tag == "style"], "inline styles would be blocked by the CSP"
    assert not [attrs for _, attrs in tags if "style" in attrs]


def test_the_shell_names_versioned_assets_that_exist(console_server: LiveServer) -> None:
    html = httpx.get(console_server.base_url + "/sites").text
    assets = re.findall(r'(?:src|href)="(/static/console/[^"]+)"', html)
    assert {a.split("?")[0] for a in assets} >= {
        "/static/console/app.js",
        "/static/console/console.css",
        "/static/console/theme.js",
    }
    preloaded = re.findall(
        r'<link rel="modulepreload" href="(/static/console/chunk-[A-Za-z0-9]+\.js)">', html
    )
    assert preloaded, "the chunks app.js imports are not preloaded"
    versions = {a.split("?v=")[1] for a in assets if "?v=" in a}
    assert len(versions) == 1
    assert re.fullmatch(r"[0-9a-f]{12}", versions.pop())
    for asset in assets:
        response = httpx.get(console_server.base_url + asset)
        assert response.status_code == 200, asset
        assert response.headers["x-content-type-options"] == "nosniff"


def test_the_root_redirects_to_the_sites_page(console_server: LiveServer) -> None:
    response = httpx.get(console_server.base_url + "/")
    assert response.status_code == 302
    assert response.headers["location"] == "/sites"


def test_paths_outside_the_console_routes_are_not_answered_with_the_shell(console_server: LiveServer) -> None:
    response = httpx.get(console_server.base_url + "/sitesX")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")


def test_an_install_without_built_assets_explains_how_to_build_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(pages, "CONSOLE", tmp_path)
    assert pages.asset_version() is None
    response = pages.console_shell()
    assert response.status_code == 503
    assert b"make install" in response.body


def test_the_asset_version_changes_when_a_built_file_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in pages.ASSETS:
        (tmp_path / name).write_text("built")
    monkeypatch.setattr(pages, "CONSOLE", tmp_path)
    before = pages.asset_version()
    (tmp_path / "app.js").write_text("built again")
    after = pages.asset_version()
    assert before is not None
    assert after is not None
    assert before != after
    assert f"app.js?v={after}" in bytes(pages.console_shell().body).decode()


def test_versioned_assets_are_cached_for_good_and_the_rest_is_revalidated(console_server: LiveServer) -> None:
    html = httpx.get(console_server.base_url + "/sites").text
    versioned = re.findall(r'"(/static/console/[a-z]+\.(?:js|css)\?v=[0-9a-f]+)"', html)
    chunks = re.findall(r'"(/static/console/chunk-[A-Za-z0-9]+\.js)"', html)
    assert versioned
    assert chunks
    for asset in versioned + chunks:
        response = httpx.get(console_server.base_url + asset)
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable", asset
    for asset in ("/static/console/favicon.svg", "/static/console/app.js"):
        response = httpx.get(console_server.base_url + asset)
        assert response.status_code == 200
        assert response.headers["cache-control"] == "no-cache", asset
