"""The bounded connection check behind ``POST /api/sites/{id}/retry``.

It fetches the site's home page and looks for the snippet with the site's key. It resolves the
name once, refuses non-public addresses unless the operator allows them, connects to exactly
the address it checked (no second lookup for a rebinding attack to race), follows redirects
only on the same host, and caps the time and the size it reads.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from sightline.sites.domains import host_of, is_development

MAX_BYTES = 512 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "Sightline-ConnectionCheck/1.0 (+snippet check requested by the site owner)"

Resolver = Callable[[str, int], list[str]]
# Name lookups run here so that a slow resolver cannot hold a check past its deadline.
_LOOKUPS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sightline-dns")


@dataclass(frozen=True)
class CheckResult:
    error: (
        str | None
    )  # None, or one of unreachable, timeout, snippet_not_found, key_mismatch, blocked_address
    detail: str


class _ScriptFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.keys: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "script":
            return
        values = {name: value or "" for name, value in attrs}
        if urlsplit(values.get("src", "")).path.endswith("/analytics.js") and "data-site" in values:
            self.keys.append(values["data-site"])


def find_snippet_keys(html: str) -> list[str]:
    finder = _ScriptFinder()
    finder.feed(html)
    finder.close()
    return finder.keys


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def address_allowed(address: str, allow_private: bool) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_multicast or ip.is_unspecified:
        return False
    if ip.is_global:
        return True
    # ::1 is also in Python's "reserved" ::/8, so loopback and private are asked first.
    return allow_private and (ip.is_loopback or ip.is_private or ip.is_link_local)


def _text(body: bytes, encoding: str | None) -> str:
    """The page's text; an unknown charset (``charset=rot13``) is read as UTF-8."""
    try:
        return body.decode(encoding or "utf-8", "replace")
    except LookupError:
        return body.decode("utf-8", "replace")


class _CheckFailedError(Exception):
    def __init__(self, error: str, detail: str) -> None:
        super().__init__(detail)
        self.error = error
        self.detail = detail


class ConnectionChecker:
    """Runs checks and spaces them: one per site per ``min_interval`` seconds."""

    def __init__(
        self,
        *,
        timeout: float,
        min_interval: float,
        allow_private: bool,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.timeout = timeout
        self.min_interval = min_interval
        self.allow_private = allow_private
        self.resolver = resolver
        self._last: dict[int, float] = {}
        self._lock = threading.Lock()

    def reserve(self, site_id: int) -> int:
        """Claim a check slot for the site; returns 0, or the seconds to wait before the next one."""
        with self._lock:
            now = time.monotonic()
            last = self._last.get(site_id)
            if last is not None and now - last < self.min_interval:
                return max(1, int(self.min_interval - (now - last) + 0.999))
            self._last[site_id] = now
            return 0

    def check(self, domain: str, key: str) -> CheckResult:
        scheme = "http" if is_development(domain) else "https"
        deadline = time.monotonic() + self.timeout
        try:
            html = self._fetch(f"{scheme}://{domain}/", domain, deadline)
        except _CheckFailedError as failure:
            return CheckResult(failure.error, failure.detail)
        keys = find_snippet_keys(html)
        if key in keys:
            return CheckResult(None, "The snippet with this site's key is on the home page.")
        if keys:
            return CheckResult("key_mismatch", "The page has a Sightline snippet with another site's key.")
        return CheckResult("snippet_not_found", "The home page has no Sightline snippet.")

    def _fetch(self, url: str, domain: str, deadline: float) -> str:
        site_host = host_of(domain)
        for _ in range(MAX_REDIRECTS + 1):
            parts = urlsplit(url)
            host = parts.hostname or ""
            if host != site_host.strip("[]"):
                raise _CheckFailedError("unreachable", "The home page redirects to another host.")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            address = self._resolve(host, port, deadline)
            response_status, location, body = self._get_once(parts.scheme, host, port, address, url, deadline)
            if response_status in {301, 302, 303, 307, 308} and location:
                url = urljoin(url, location)
                if urlsplit(url).scheme not in {"http", "https"}:
                    raise _CheckFailedError("unreachable", "The home page redirects to a non-web address.")
                continue
            if response_status >= 400:
                raise _CheckFailedError("unreachable", f"The home page answered HTTP {response_status}.")
            return body
        raise _CheckFailedError("unreachable", "The home page redirects too many times.")

    def _resolve(self, host: str, port: int, deadline: float) -> str:
        try:
            addresses = _LOOKUPS.submit(self.resolver, host, port).result(
                timeout=max(0.0, deadline - time.monotonic())
            )
        except FutureTimeout:
            raise _CheckFailedError("timeout", "The domain name did not resolve in time.") from None
        except (OSError, UnicodeError):
            raise _CheckFailedError("unreachable", "The domain name does not resolve.") from None
        if not addresses:
            raise _CheckFailedError("unreachable", "The domain name does not resolve.")
        if not all(address_allowed(a, self.allow_private) for a in addresses):
            raise _CheckFailedError(
                "blocked_address", "The domain resolves to a private or reserved address."
            )
        return addresses[0]

    def _get_once(
        self, scheme: str, host: str, port: int, address: str, url: str, deadline: float
    ) -> tuple[int, str | None, str]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _CheckFailedError("timeout", "The home page did not answer in time.")
        parts = urlsplit(url)
        literal = f"[{address}]" if ":" in address else address
        pinned = f"{scheme}://{literal}:{port}{parts.path or '/'}" + (
            f"?{parts.query}" if parts.query else ""
        )
        default_port = 443 if scheme == "https" else 80
        host_header = host if port == default_port else f"{host}:{port}"
        if ":" in host:
            host_header = f"[{host}]" if port == default_port else f"[{host}]:{port}"
        headers = {"Host": host_header, "User-Agent": USER_AGENT, "Accept": "text/html,*/*;q=0.5"}
        import httpx  # loaded by the first check, not by every server start (a quarter second)

        try:
            with (
                httpx.Client(
                    timeout=httpx.Timeout(remaining), follow_redirects=False, trust_env=False
                ) as client,
                client.stream("GET", pinned, headers=headers, extensions={"sni_hostname": host}) as response,
            ):
                if response.is_redirect:
                    return response.status_code, response.headers.get("location"), ""
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    if time.monotonic() > deadline:
                        raise _CheckFailedError("timeout", "The home page did not arrive in time.")
                    chunks.append(chunk)
                    size += len(chunk)
                    if size >= MAX_BYTES:
                        break
                body = b"".join(chunks)[:MAX_BYTES]
                return response.status_code, None, _text(body, response.encoding)
        except httpx.TimeoutException:
            raise _CheckFailedError("timeout", "The home page did not answer in time.") from None
        except httpx.HTTPError:
            raise _CheckFailedError("unreachable", "The site could not be reached.") from None
