"""The one settings registry.

Every setting is declared once here (name, type, default, help, which commands take it).
The CLI flags (``--data-dir``), the environment variables (``SIGHTLINE_DATA_DIR``) and
``docs/settings.md`` all come from this list. Imports nothing from the rest of Sightline but
``locations`` (which reads ``--recordings-url``, and imports nothing itself).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sightline import locations

ENV_PREFIX = "SIGHTLINE_"

SERVE = "serve"
OWNER = "create-owner"
MIGRATE = "migrate"
REBUILD = "rebuild-store"
BACKUP = "backup"
RESTORE = "restore"
ERASE = "erase-visitor"
EXPORT = "export-visitor"
DB_COMMANDS = (SERVE, OWNER, MIGRATE, REBUILD, BACKUP, RESTORE, ERASE, EXPORT)


def _bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"expected true or false, got {raw!r}")


def _whole(raw: str) -> int:
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValueError(f"expected a whole number, got {raw!r}")
    return int(text)


def _port(raw: str) -> int:
    value = _whole(raw)
    if not 0 <= value <= 65535:
        raise ValueError("a port is a number from 0 to 65535")
    return value


def _niceness(raw: str) -> int:
    value = _whole(raw)
    if value > 19:
        raise ValueError("a CPU priority (nice value) is a number from 0 to 19")
    return value


def _positive_int(raw: str) -> int:
    value = _whole(raw)
    if value < 1:
        raise ValueError("expected a whole number of at least 1")
    return value


def _public_url(raw: str) -> str:
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError("the public URL looks like https://analytics.example.com")
    if parts.path not in {"", "/"} or parts.query or parts.fragment or parts.username:
        raise ValueError("the public URL is an origin only: scheme, host and optional port")
    netloc = parts.netloc.lower()
    if (parts.scheme, parts.port) in {("http", 80), ("https", 443)}:
        netloc = netloc.rsplit(":", 1)[0]  # the browser's Origin never names the default port
    return f"{parts.scheme}://{netloc}"


def _database_url(raw: str) -> str:
    scheme = raw.split(":", 1)[0].lower()
    if not scheme.startswith(("sqlite", "postgresql", "postgres")):
        raise ValueError("the database URL starts with sqlite:/// or postgresql://")
    return raw.strip()


def _networks(raw: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
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


def _positive_float(raw: str) -> float:
    value = float(raw)
    if not value > 0:
        raise ValueError("expected a number above 0")
    return value


def _events_url(raw: str) -> str:
    value = raw.strip()
    if value and not value.lower().startswith(("clickhouse://", "chdb://")):
        raise ValueError("the events URL is empty (embedded DuckDB) or clickhouse://USER:PASS@HOST:8123/DB")
    return value


def _recordings_url(raw: str) -> str:
    locations.parse(raw)  # ValueError with the reason
    return raw.strip()


def _log_format(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"text", "json"}:
        raise ValueError("log format is text or json")
    return value


def _token(raw: str) -> str:
    value = raw.strip()
    if len(value) < 16:
        raise ValueError("use a token of at least 16 characters (for example: openssl rand -hex 32)")
    return value


def _smtp_url(raw: str) -> str:
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"smtp", "smtps"} or not parts.hostname:
        raise ValueError("the SMTP URL looks like smtp://user:pass@mail.example.com:587")
    return raw.strip()


def _log_level(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"debug", "info", "warning", "error"}:
        raise ValueError("log level is one of debug, info, warning, error")
    return value


@dataclass(frozen=True)
class Setting:
    name: str
    type_name: str
    default: Any
    help: str
    parse: Callable[[str], Any]
    commands: tuple[str, ...] = (SERVE,)

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


REGISTRY: tuple[Setting, ...] = (
    Setting("host", "string", "127.0.0.1", "Address the HTTP server listens on.", str),
    Setting("port", "integer", 8000, "TCP port the HTTP server listens on.", _port),
    Setting(
        "data_dir",
        "path",
        "./data",
        "Directory for the SQLite database, recordings and other files.",
        str,
        DB_COMMANDS,
    ),
    Setting(
        "public_url",
        "url",
        None,
        "Origin the console is reached at (scheme://host[:port]); it is the only Origin accepted on "
        "state-changing console requests. Default: http://HOST:PORT.",
        _public_url,
    ),
    Setting(
        "database_url",
        "url",
        None,
        "Database to use: sqlite:///path/to/file.db or postgresql://user:pass@host:port/db. "
        "Default: SQLite at DATA_DIR/sightline.db.",
        _database_url,
        DB_COMMANDS,
    ),
    Setting(
        "trusted_proxies",
        "list",
        None,
        "Comma-separated addresses or CIDR ranges of reverse proxies in front of Sightline "
        "(e.g. 127.0.0.1,10.0.0.0/8). Only a connection from one of them has its Forwarded or "
        "X-Forwarded-For header believed; the client is the right-most address in it that is not "
        "a trusted proxy. Default: none (the TCP peer is the client).",
        _networks,
    ),
    Setting(
        "header_timeout_seconds",
        "number",
        10.0,
        "A client must send a request's headers within this many seconds of connecting (or of the "
        "previous answer on its connection); a slower connection is closed, so slow clients cannot "
        "hold connections open.",
        _positive_float,
    ),
    Setting(
        "body_timeout_seconds",
        "number",
        30.0,
        "A client must send a request's body within this many seconds after its headers; a slower "
        "connection is closed. A file uploaded to an import must instead keep coming: each 64 KiB "
        "received gives it this much more time.",
        _positive_float,
    ),
    Setting(
        "keep_alive_seconds",
        "integer",
        5,
        "An idle keep-alive connection is closed after this many seconds.",
        _positive_int,
    ),
    Setting(
        "max_connections",
        "integer",
        1000,
        "Client connections served at once. A new connection beyond it closes the one that has "
        "waited longest for its headers; when all are busy with requests it is answered 503. Kept "
        "under the open-file limit (raised to its hard limit when needed).",
        _positive_int,
    ),
    Setting("log_level", "choice", "info", "One of debug, info, warning, error.", _log_level),
    Setting(
        "log_format",
        "choice",
        "text",
        "text, or json for one JSON object per line (time, level, logger, message, request_id); "
        "every line logged while a request is handled carries its request id.",
        _log_format,
        DB_COMMANDS,
    ),
    Setting(
        "metrics_token",
        "string",
        None,
        "Bearer token GET /metrics asks for (Authorization: Bearer TOKEN); without one, /metrics "
        "answers only to clients on this machine (loopback). Prefer the environment variable: "
        "a flag shows in the process list.",
        _token,
    ),
    Setting(
        "session_idle_minutes",
        "integer",
        720,
        "A console session unused for this long ends.",
        _positive_int,
    ),
    Setting(
        "session_max_hours",
        "integer",
        336,
        "A console session ends this long after login, however active.",
        _positive_int,
    ),
    Setting(
        "login_max_failures",
        "integer",
        5,
        "Failed logins allowed per account within the throttle window before 429.",
        _positive_int,
    ),
    Setting(
        "login_max_failures_per_ip",
        "integer",
        20,
        "Failed logins allowed per client address within the throttle window before 429.",
        _positive_int,
    ),
    Setting(
        "login_throttle_minutes",
        "integer",
        15,
        "Length of the login throttle window.",
        _positive_int,
    ),
    Setting(
        "setup_token_minutes",
        "integer",
        60,
        "How long the one-time setup link printed at first start stays valid.",
        _positive_int,
    ),
    Setting(
        "invitation_days",
        "integer",
        7,
        "How long a team invitation link stays valid.",
        _positive_int,
    ),
    Setting(
        "smtp_url",
        "url",
        None,
        "SMTP server for invitations, weekly and monthly e-mail reports and traffic-spike notices: "
        "smtp://user:pass@host:587 (STARTTLS when offered) or smtps://user:pass@host:465. "
        "Default: no e-mail is sent.",
        _smtp_url,
    ),
    Setting(
        "smtp_from",
        "string",
        None,
        "Sender address of Sightline's e-mails. Default: sightline@ the public URL's host.",
        str,
    ),
    Setting(
        "mail_check_seconds",
        "number",
        300.0,
        "How often the e-mail job looks for digests that are due and for traffic spikes.",
        _positive_float,
    ),
    Setting(
        "import_max_mb",
        "integer",
        512,
        "Largest file an import accepts (Plausible's CSV export as a zip, or a CSV of daily "
        "figures), in MiB; a zip may unpack to at most ten times as much.",
        _positive_int,
    ),
    Setting(
        "api_key_requests_per_minute",
        "integer",
        120,
        "Stats API requests one API key may make per minute; beyond it 429 with Retry-After.",
        _positive_int,
    ),
    Setting(
        "share_requests_per_minute",
        "integer",
        120,
        "Requests one shared dashboard link may serve per minute (and wrong passwords allowed "
        "per link per 15 minutes: a tenth of it); beyond it 429 with Retry-After.",
        _positive_int,
    ),
    Setting(
        "allow_private_addresses",
        "boolean",
        False,
        "Let connection checks reach private, loopback and link-local addresses "
        "(for development and intranet sites).",
        _bool,
    ),
    Setting(
        "check_timeout_seconds",
        "integer",
        5,
        "Time limit of one site connection check.",
        _positive_int,
    ),
    Setting(
        "check_min_interval_seconds",
        "integer",
        10,
        "Minimum time between two connection checks of one site.",
        _positive_int,
    ),
    Setting(
        "disk_warn_free_mb",
        "integer",
        2048,
        "Below this many MiB free on the data directory's (or SQLite database's) file system, "
        "health's disk service warns and names what uses the space.",
        _positive_int,
    ),
    Setting(
        "disk_refuse_free_mb",
        "integer",
        256,
        "Below this many MiB free, new events, recording chunks and survey answers are refused "
        "with 507 (the SDK sends them again later) instead of filling the disk; taken again by "
        "itself once there is room.",
        _positive_int,
    ),
    Setting(
        "recording_retention_days",
        "integer",
        30,
        "Recordings older than this many days are deleted.",
        _positive_int,
    ),
    Setting(
        "recordings_url",
        "url",
        None,
        "Where recording chunks are stored: empty for DATA_DIR/recordings (the default); "
        "file:///path for a directory, which several nodes may share (NFS, CephFS, ...); or "
        "s3://BUCKET/PREFIX?endpoint=https://HOST:PORT&region=NAME for an S3-compatible object "
        "store (Amazon S3 without endpoint; addressing=path or virtual overrides the style), with "
        "credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or the "
        "machine's role), never in the URL. Every node of several must name the same storage.",
        _recordings_url,
        (SERVE, BACKUP, RESTORE, ERASE),
    ),
    Setting(
        "recording_max_mb",
        "integer",
        50,
        "Largest size of one session recording, in MiB of compressed chunks; the SDK stops "
        "recording a visit that reaches it.",
        _positive_int,
    ),
    Setting(
        "ingest_queue_events",
        "integer",
        20000,
        "Events that may wait for the database at once; beyond it ingest answers 429 with Retry-After "
        "(the SDK sends them again later).",
        _positive_int,
    ),
    Setting(
        "ingest_accept_headless",
        "boolean",
        False,
        "Store events from headless browsers (automated tests of your own site); by default they are "
        "dropped as bots.",
        _bool,
    ),
    Setting(
        "sdk_dir",
        "path",
        None,
        "Directory /analytics.js and /analytics-NAME.js are served from. Default: the SDK built "
        "into the package (src/sightline/web/static/sdk).",
        str,
    ),
    Setting(
        "event_retention_days",
        "integer",
        None,
        "Delete events (the log and the analytics store) and survey responses older than this many "
        "days, for every site that sets no retention of its own. Default: keep them.",
        _positive_int,
    ),
    Setting(
        "geoip_database",
        "path",
        None,
        "A MaxMind-format database (.mmdb: GeoLite2 City, DB-IP City Lite, ...) for the region and "
        "city of each event. Countries work without it (from the bundled registry data).",
        str,
    ),
    Setting(
        "events_url",
        "url",
        None,
        "Where the analytics store lives: empty for DuckDB in DATA_DIR/store.duckdb (the default), "
        "or clickhouse://USER:PASSWORD@HOST:8123/DATABASE for a ClickHouse server or cluster "
        "(its HTTP interface). The SQL database keeps the durable log the store is fed from.",
        _events_url,
        (SERVE, REBUILD),
    ),
    Setting(
        "event_log_retention_days",
        "integer",
        None,
        "Days the durable event log (the SQL events table) keeps an event after it reached the "
        "analytics store. Default: forever, so the store can always be rebuilt from the log "
        "(sightline rebuild-store); with a limit, older events live only in the store.",
        _positive_int,
    ),
    Setting(
        "store_memory_mb",
        "integer",
        1024,
        "Memory the embedded analytics store (DuckDB) may use for its queries and cache, in MiB; "
        "larger queries spill to disk under DATA_DIR.",
        _positive_int,
        (SERVE, REBUILD),
    ),
    Setting(
        "store_feed_seconds",
        "number",
        0.5,
        "How often the store process looks for new events in the log when it has caught up; "
        "while events are waiting it feeds them without pause, in batches of 20000 events (122880 while "
        "a backlog of more waits).",
        _positive_float,
    ),
    Setting(
        "store_niceness",
        "integer",
        10,
        "The store process's CPU priority below the server's (a nice value, 0-19): while ingest "
        "keeps the cores busy, feeding the store and answering reports wait for it, so events "
        "are acknowledged without delay and reports lag instead. 0: the same priority as ingest.",
        _niceness,
    ),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in REGISTRY}


@dataclass(frozen=True)
class Settings:
    """Resolved values of every setting in the registry."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def data_path(self) -> Path:
        return Path(self.values["data_dir"]).resolve()

    @property
    def console_origin(self) -> str:
        if self.values.get("public_url"):
            return str(self.values["public_url"])
        host = str(self.values["host"])
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        if host in {"0.0.0.0", "[::]"}:  # noqa: S104 - a listen address, not a place to reach
            host = "127.0.0.1"
        return f"http://{host}:{self.values['port']}"

    @property
    def secure_cookies(self) -> bool:
        return self.console_origin.startswith("https://")

    @property
    def effective_database_url(self) -> str:
        url = self.values.get("database_url")
        if url:
            return str(url)
        return f"sqlite:///{self.data_path / 'sightline.db'}"


class SettingsError(ValueError):
    """A setting's value could not be read; the message names the setting."""


def load(overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Resolve every setting: explicit overrides, then ``SIGHTLINE_*`` variables, then defaults."""
    env = os.environ if environ is None else environ
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    values: dict[str, Any] = {}
    for setting in REGISTRY:
        if setting.name in given:
            raw = given[setting.name]
            source = setting.flag
        elif setting.env in env and env[setting.env] != "":
            raw = env[setting.env]
            source = setting.env
        else:
            values[setting.name] = setting.default
            continue
        if isinstance(raw, str):
            try:
                values[setting.name] = setting.parse(raw)
            except ValueError as exc:
                raise SettingsError(f"{source}: {exc}") from None
        else:
            values[setting.name] = raw
    return Settings(values)


def markdown_table() -> str:
    """The settings table of ``docs/settings.md``; a test keeps the two in step."""
    lines = [
        "| Flag | Environment variable | Type | Default | Commands | Meaning |",
        "|---|---|---|---|---|---|",
    ]
    for s in REGISTRY:
        default = "(see meaning)" if s.default is None else f"`{str(s.default).lower()}`"
        lines.append(
            f"| `{s.flag}` | `{s.env}` | {s.type_name} | {default} | {', '.join(s.commands)} | {s.help} |"
        )
    return "\n".join(lines)
