"""A customer's web site on loopback: a small threaded HTTP server whose answers a test sets."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.support.origins import loopback_server


@dataclass
class Page:
    status: int = 200
    body: bytes = b"<!doctype html><title>Shop</title><p>Hello</p>"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    delay: float = 0.0


class CustomerSite:
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {"/": Page()}
        self.requests: list[tuple[str, dict[str, str]]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requests.append((self.path, dict(self.headers.items())))
                page = site.pages.get(self.path.split("?")[0], Page(status=404, body=b"not found"))
                if page.delay:
                    time.sleep(page.delay)
                try:
                    self.send_response(page.status)
                    for name, value in page.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(page.body)))
                    self.end_headers()
                    self.wfile.write(page.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = loopback_server(Handler)
        self.port = int(self.server.server_address[1])
        self.domain = f"127.0.0.1:{self.port}"
        self.origin = f"http://{self.domain}"

    def home(self, html: str, **kwargs: object) -> None:
        self.pages["/"] = Page(body=html.encode(), **kwargs)  # type: ignore[arg-type]


@contextmanager
def customer_site() -> Iterator[CustomerSite]:
    site = CustomerSite()
    thread = threading.Thread(target=site.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.server.shutdown()
        site.server.server_close()
