"""The HTTP server's settings: where it listens, its limits, accounts, sessions and mail."""

from __future__ import annotations

from sightline.settings import values as v
from sightline.settings.setting import DB_COMMANDS, MCP, Setting

SERVER: tuple[Setting, ...] = (
    Setting("host", "string", "127.0.0.1", "Address the HTTP server listens on.", str),
    Setting("port", "integer", 8000, "TCP port the HTTP server listens on.", v.port),
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
        v.public_url,
    ),
    Setting(
        "database_url",
        "url",
        None,
        "Database to use: sqlite:///path/to/file.db or postgresql://user:pass@host:port/db. "
        "Default: SQLite at DATA_DIR/sightline.db.",
        v.database_url,
        DB_COMMANDS,
    ),
    Setting(
        "trusted_proxies",
        "list",
        None,
        "Comma-separated addresses or CIDR ranges of reverse proxies in front of Sightline "
        "(e.g. 127.0.0.1,10.0.0.0/8). Only a connection from one of them has its "
        "--client-address-header believed; the client is the right-most address in it that is "
        "not a trusted proxy, and unknown when that hop is not an address. Default: none (the "
        "TCP peer is the client).",
        v.networks,
    ),
    Setting(
        "client_address_header",
        "string",
        "x-forwarded-for",
        "The one header that carries the client's address from a trusted proxy, the one your "
        "proxy sets: X-Forwarded-For, Forwarded (RFC 7239), or a header holding the address alone "
        "such as X-Real-IP. Every other forwarding header is ignored.",
        v.header_name,
    ),
    Setting(
        "header_timeout_seconds",
        "number",
        10.0,
        "A client must send a request's headers within this many seconds of connecting (or of the "
        "previous answer on its connection); a slower connection is closed, so slow clients cannot "
        "hold connections open.",
        v.positive_float,
    ),
    Setting(
        "body_timeout_seconds",
        "number",
        30.0,
        "A client must send a request's body within this many seconds after its headers; a slower "
        "connection is closed. A file uploaded to an import must instead keep coming: each 64 KiB "
        "received gives it this much more time.",
        v.positive_float,
    ),
    Setting(
        "keep_alive_seconds",
        "integer",
        5,
        "An idle keep-alive connection is closed after this many seconds.",
        v.positive_int,
    ),
    Setting(
        "max_connections",
        "integer",
        1000,
        "Client connections served at once. A new connection beyond it closes the one that has "
        "waited longest for its headers; when all are busy with requests it is answered 503. Kept "
        "under the open-file limit (raised to its hard limit when needed).",
        v.positive_int,
    ),
    Setting("log_level", "choice", "info", "One of debug, info, warning, error.", v.log_level),
    Setting(
        "log_format",
        "choice",
        "text",
        "text, or json for one JSON object per line (time, level, logger, message, request_id); "
        "every line logged while a request is handled carries its request id.",
        v.log_format,
        DB_COMMANDS,
    ),
    Setting(
        "metrics_token",
        "string",
        None,
        "Bearer token GET /metrics asks for (Authorization: Bearer TOKEN); without one, /metrics "
        "answers only to clients on this machine (loopback). Prefer the environment variable: "
        "a flag shows in the process list.",
        v.token,
    ),
    Setting(
        "session_idle_minutes",
        "integer",
        720,
        "A console session unused for this long ends.",
        v.positive_int,
    ),
    Setting(
        "session_max_hours",
        "integer",
        336,
        "A console session ends this long after login, however active.",
        v.positive_int,
    ),
    Setting(
        "login_max_failures",
        "integer",
        5,
        "Failed logins allowed per account within the throttle window before 429.",
        v.positive_int,
    ),
    Setting(
        "login_max_failures_per_ip",
        "integer",
        20,
        "Failed logins allowed per client address within the throttle window before 429.",
        v.positive_int,
    ),
    Setting(
        "login_throttle_minutes",
        "integer",
        15,
        "Length of the login throttle window.",
        v.positive_int,
    ),
    Setting(
        "setup_token_minutes",
        "integer",
        60,
        "How long the one-time setup link printed at first start stays valid.",
        v.positive_int,
    ),
    Setting(
        "invitation_days",
        "integer",
        7,
        "How long a team invitation link stays valid.",
        v.positive_int,
    ),
    Setting(
        "smtp_url",
        "url",
        None,
        "SMTP server for invitations, weekly and monthly e-mail reports and traffic-spike notices: "
        "smtp://user:pass@host:587 (STARTTLS when offered) or smtps://user:pass@host:465. "
        "Default: no e-mail is sent.",
        v.smtp_url,
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
        v.positive_float,
    ),
    Setting(
        "import_max_mb",
        "integer",
        512,
        "Largest file an import accepts (Plausible's CSV export as a zip, or a CSV of daily "
        "figures), in MiB; a zip may unpack to at most ten times as much, and to at most 40 times "
        "its own size.",
        v.positive_int,
    ),
    Setting(
        "api_key_requests_per_minute",
        "integer",
        120,
        "Stats API requests one API key may make per minute; beyond it 429 with Retry-After.",
        v.positive_int,
    ),
    Setting(
        "share_requests_per_minute",
        "integer",
        120,
        "Requests one shared dashboard link may serve per minute (and wrong passwords allowed "
        "per link per 15 minutes: a tenth of it); beyond it 429 with Retry-After.",
        v.positive_int,
    ),
    Setting(
        "allow_private_addresses",
        "boolean",
        False,
        "Let connection checks reach private, loopback and link-local addresses "
        "(for development and intranet sites).",
        v.boolean,
    ),
    Setting(
        "api_url",
        "url",
        "http://127.0.0.1:8000",
        "The Sightline server whose stats API `sightline mcp` reads (its public URL).",
        v.public_url,
        (MCP,),
    ),
    Setting(
        "api_key",
        "token",
        None,
        "The API key `sightline mcp` reads the stats API with (from the console's Team page); "
        "give it in the environment rather than on the command line, where other users see it.",
        v.token,
        (MCP,),
    ),
)
