"""A customer's site for the recording tests: its own loopback origin, pages given by the test."""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STYLE = (
    "body{margin:0;font:16px/1.4 sans-serif;background:#f4f1ea;color:#1d2433}"
    "header{background:#1f4e79;color:#fff;padding:24px}"
    ".cards{display:flex;gap:16px;padding:24px}"
    ".card{flex:1;height:140px;border-radius:12px}"
    ".a{background:#e07a5f}.b{background:#3d405b}.c{background:#81b29a}"
    "footer{margin:24px;padding:16px;border:4px solid #f2cc8f}"
)


class SitePages:
    """Every GET answers ``pages[path]`` (or the default page) with the snippet in its <head>."""

    def __init__(self) -> None:
        self.snippet = ""
        self.pages: dict[str, str] = {}
        self.head = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path.startswith("/favicon"):
                    self.send_error(404)
                    return
                body = site.render(path).encode()
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

    def render(self, path: str) -> str:
        body = self.pages.get(path, "<h1>Shop</h1><p>Welcome.</p>")
        return (
            "<!doctype html><html><head><meta charset='utf-8'><title>Shop</title>"
            f"<style>{STYLE}</style>{self.head}{self.snippet}</head><body>{body}</body></html>"
        )

    def use(self, base_url: str, key: str, **attrs: str) -> None:
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
