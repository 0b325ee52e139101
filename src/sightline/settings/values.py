"""How each setting's text is read: one function per kind of value, raising ValueError with the
reason (the loader names the setting). Imports nothing from Sightline but ``locations``."""

from __future__ import annotations

import ipaddress
import os
import re
from urllib.parse import urlsplit

from sightline import locations


def boolean(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"expected true or false, got {raw!r}")


def whole(raw: str) -> int:
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValueError(f"expected a whole number, got {raw!r}")
    return int(text)


def port(raw: str) -> int:
    value = whole(raw)
    if not 0 <= value <= 65535:
        raise ValueError("a port is a number from 0 to 65535")
    return value


def niceness(raw: str) -> int:
    value = whole(raw)
    if value > 19:
        raise ValueError("a CPU priority (nice value) is a number from 0 to 19")
    return value


def readable_file(raw: str) -> str:
    """The path of a file this process can read."""
    path = raw.strip()
    try:
        with open(path, "rb") as file:
            file.read(1)
    except OSError as exc:
        raise ValueError(f"cannot read {path!r}: {exc.strerror or exc}") from None
    return path


def positive_int(raw: str) -> int:
    value = whole(raw)
    if value < 1:
        raise ValueError("expected a whole number of at least 1")
    return value


def public_url(raw: str) -> str:
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError("the public URL looks like https://analytics.example.com")
    if parts.path not in {"", "/"} or parts.query or parts.fragment or parts.username:
        raise ValueError("the public URL is an origin only: scheme, host and optional port")
    netloc = parts.netloc.lower()
    if (parts.scheme, parts.port) in {("http", 80), ("https", 443)}:
        netloc = netloc.rsplit(":", 1)[0]  # the browser's Origin never names the default port
    return f"{parts.scheme}://{netloc}"


def database_url(raw: str) -> str:
    scheme = raw.split(":", 1)[0].lower()
    if not scheme.startswith(("sqlite", "postgresql", "postgres")):
        raise ValueError("the database URL starts with sqlite:/// or postgresql://")
    return raw.strip()


def networks(raw: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    networks = []
    for item in raw.split(","):
        text = item.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not an IP address or a CIDR range such as 10.0.0.0/8") from None
    return tuple(networks)


HEADER_NAME = re.compile(r"\A[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}\Z")


def header_name(raw: str) -> str:
    """An HTTP header's name (RFC 9110 token), lower-case as ASGI gives it."""
    text = raw.strip()
    if not HEADER_NAME.match(text):
        raise ValueError(f"{text!r} is not an HTTP header name such as X-Forwarded-For")
    return text.lower()


def positive_float(raw: str) -> float:
    value = float(raw)
    if not value > 0:
        raise ValueError("expected a number above 0")
    return value


CHDB_SWITCH = "SIGHTLINE_TEST_CHDB"  # set by Sightline's own tests: chdb:// is accepted then


def events_url(raw: str) -> str:
    value = raw.strip()
    if value.lower().startswith("chdb://") and os.environ.get(CHDB_SWITCH) != "1":
        raise ValueError(
            "chdb:// is the embedded ClickHouse of Sightline's own tests, not a store to serve from: "
            "use clickhouse://USER:PASS@HOST:8123/DB, or leave it empty for the embedded store"
        )
    if value and not value.lower().startswith(("clickhouse://", "chdb://")):
        raise ValueError("the events URL is empty (embedded DuckDB) or clickhouse://USER:PASS@HOST:8123/DB")
    return value


def recordings_url(raw: str) -> str:
    locations.parse(raw)  # ValueError with the reason
    return raw.strip()


def log_format(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"text", "json"}:
        raise ValueError("log format is text or json")
    return value


def token(raw: str) -> str:
    value = raw.strip()
    if len(value) < 16:
        raise ValueError("use a token of at least 16 characters (for example: openssl rand -hex 32)")
    return value


def smtp_url(raw: str) -> str:
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"smtp", "smtps"} or not parts.hostname:
        raise ValueError("the SMTP URL looks like smtp://user:pass@mail.example.com:587")
    return raw.strip()


def log_level(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"debug", "info", "warning", "error"}:
        raise ValueError("log level is one of debug, info, warning, error")
    return value
