"""A customer's web site on its own loopback origin: every path answers a page with the snippet.

``use`` puts the Sightline snippet in the page's <head>; ``pages`` gives some paths their own body;
``head`` adds markup before the snippet.
"""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler

from tests.support.origins import loopback_server

DEFAULT_BODY = "<h1>Shop</h1><a id='next' href='/next'>next</a>"


class Shop:
    def __init__(self, *, style: str = "", body: str = DEFAULT_BODY) -> None:
        self.snippet = ""
        self.style = style
        self.head = ""
        self.body = body
        self.pages: dict[str, str] = {}
        self.headers: dict[str, str] = {}  # sent with every page (a Content-Security-Policy, ...)
        shop = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path.startswith("/favicon"):
                    self.send_error(404)
                    return
                content = shop.render(path).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(content)))
                self.send_header("Cache-Control", "no-store")
                for name, value in shop.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = loopback_server(Handler)
        self.port = int(self.server.server_address[1])
        self.domain = f"127.0.0.1:{self.port}"
        self.origin = f"http://{self.domain}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def render(self, path: str) -> str:
        return (
            "<!doctype html><html><head><meta charset='utf-8'><title>Shop</title>"
            f"{f'<style>{self.style}</style>' if self.style else ''}{self.head}{self.snippet}</head>"
            f"<body>{self.pages.get(path, self.body)}</body></html>"
        )

    def use(self, base_url: str, key: str, **attrs: str) -> None:
        """Put the snippet for ``key`` on every page; ``attrs`` become data-* attributes."""
        extra = "".join(
            f' data-{name.replace("_", "-")}="{html.escape(value)}"' for name, value in attrs.items()
        )
        self.snippet = (
            f'<script defer src="{base_url}/analytics.js" data-site="{html.escape(key)}"{extra}></script>'
        )

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)
