"""Log set-up for every Sightline process: text or JSON lines, each line of a request with its id.

``--log-format json`` writes one JSON object per line (python-json-logger): ``time``, ``level``,
``logger``, ``message``, ``request_id`` (on every line logged while a request is handled, in
threads it hands work to as well) and any ``extra`` fields. The request id comes from
``X-Request-ID`` when a proxy sends a sane one, otherwise it is made here (a per-process prefix
and a counter: no system call on the hot path); the response carries it back in ``X-Request-ID``.
Client addresses are never logged: uvicorn's access log (which has them) stays off, and
``sightline.access`` writes its own line per request at debug level.

Imports nothing from the rest of Sightline.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import re
import secrets
import sys
from typing import Any

from pythonjsonlogger.json import JsonFormatter

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s%(request_tag)s: %(message)s"
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s"
JSON_RENAME = {"asctime": "time", "levelname": "level", "name": "logger"}

REQUEST_ID_HEADER = b"x-request-id"
_SANE_ID = re.compile(rb"\A[A-Za-z0-9._:-]{1,64}\Z")

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)


class RequestIds:
    """Request ids for one process: ``<6 hex>-<counter in hex>``, unique across restarts and nodes
    in practice (the prefix is random), cheap to make."""

    def __init__(self) -> None:
        self.prefix = secrets.token_hex(3)
        self._counter = itertools.count(1)

    def assign(self, headers: list[tuple[bytes, bytes]]) -> bytes:
        """The request's id (the proxy's when it sent a sane one), set for its log lines."""
        given = None
        for name, value in headers:
            if name == REQUEST_ID_HEADER:
                given = value if _SANE_ID.match(value) else None
                break
        rid = given if given is not None else b"%s-%x" % (self.prefix.encode(), next(self._counter))
        request_id.set(rid.decode("ascii"))
        return rid


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record: the request's id, None outside a request."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class TextFormatter(logging.Formatter):
    """``time LEVEL logger [request id]: message``."""

    def format(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        record.request_tag = f" [{rid}]" if rid else ""
        return super().format(record)


def json_formatter() -> logging.Formatter:
    return JsonFormatter(JSON_FIELDS, rename_fields=JSON_RENAME, timestamp=False)


def configure(level: str, fmt: str = "text", stream: Any = None) -> None:
    """Route every logger (Sightline's, uvicorn's, libraries') through one handler on the root."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(json_formatter() if fmt == "json" else TextFormatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    if level != "debug":
        logging.getLogger("alembic").setLevel(logging.WARNING)
        logging.getLogger("mcp").setLevel(logging.WARNING)  # a line per assistant request otherwise
    # uvicorn's access log carries client addresses, which Sightline never logs.
    logging.getLogger("uvicorn.access").disabled = True
