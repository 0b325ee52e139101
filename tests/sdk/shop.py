"""A customer's web site on its own loopback origin: one HTML page, with the snippet, on every path."""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Shop:
    """Every GET answers the shop page; ``snippet`` is the <script> tag a test put in its <head>."""

    def __init__(self) -> None:
        self.snippet = ""
        shop = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.startswith("/favicon"):
                    self.send_error(404)
                    return
                body = shop.page_html().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.domain = f"127.0.0.1:{self.port}"
        self.origin = f"http://{self.domain}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def page_html(self) -> str:
        return (
            "<!doctype html><html><head><meta charset='utf-8'><title>Shop</title>"
            f"{self.snippet}</head><body><h1>Shop</h1><a id='next' href='/next'>next</a></body></html>"
        )

    def use(self, base_url: str, key: str, **attrs: str) -> None:
        """Put the snippet for ``key`` on the page; ``attrs`` become data-* attributes."""
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
