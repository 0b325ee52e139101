"""The ClickHouse engine's requests as they travel: each fits a server's default limits, each is
safe to send again, and one that keeps failing says which it was and what the server answered.

Over HTTP a bound parameter travels in the URL (up to 4 KiB of them) or in a form field, and a
server with its default settings refuses a URL over ``http_max_uri_size`` (1 MiB) and a field
over ``http_max_field_value_size`` (128 KiB); the query text is held to ``max_query_size``
(256 KiB) and ``max_ast_elements`` (50,000). So nothing that grows with a batch is ever bound or
pasted into the SQL: the feed's visit keys travel as external data (``keys_data``: a temporary
table in the body of the one request that reads them, 8 bytes a key), any other long bound list
likewise (``lists_as_data``), rows as inserts' bodies.

Every request is idempotent: reads; ``CREATE ... IF NOT EXISTS``; inserts carrying a
deduplication token (a batch sent again is dropped by the server); the watermark's rows, which a
second copy leaves as they were (the newest row wins). So ``Wire.call`` sends one again when the
server could not be reached or answered with a passing fault (too many parts or queries, a
timeout, memory, replicas not ready), after 0.25, 0.5, 1, 2 s, and otherwise raises
``RequestFailedError`` naming the request and the server's answer, which the store's health shows.

May import clickhouse-connect and the standard library only.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pyarrow as pa

log = logging.getLogger("sightline.store")

T = TypeVar("T")

# The server's defaults this engine keeps under (docs/scaling.md; tests/support/clickhouse.py
# enforces the same).
HTTP_MAX_URI_SIZE = 1_048_576
HTTP_MAX_FIELD_VALUE_SIZE = 131_072
MAX_QUERY_SIZE = 262_144
# Server answers worth a second try: the request was right, the server was not ready for it.
TRANSIENT = frozenset(
    {
        159,  # TIMEOUT_EXCEEDED
        202,  # TOO_MANY_SIMULTANEOUS_QUERIES
        203,  # NO_FREE_CONNECTION
        209,  # SOCKET_TIMEOUT
        210,  # NETWORK_ERROR
        241,  # MEMORY_LIMIT_EXCEEDED
        242,  # TABLE_IS_READ_ONLY (a replica lost its keeper session)
        252,  # TOO_MANY_PARTS
        285,  # TOO_FEW_LIVE_REPLICAS
        319,  # UNKNOWN_STATUS_OF_INSERT
        999,  # KEEPER_EXCEPTION
    }
)
BACK_OFF = (0.25, 0.5, 1.0, 2.0)  # seconds before each further try
_URL = re.compile(r"\s*\(for url [^)]*\)")
_CLIENT = re.compile(r"^Received ClickHouse exception, code: \d+, server response: ")


class RequestFailedError(RuntimeError):
    """A request the server refused, or could not be reached for, after every try."""

    def __init__(self, what: str, answer: str, tries: int) -> None:
        self.what = what
        self.answer = answer
        self.tries = tries
        super().__init__(f"ClickHouse request failed ({what}, {tries} tries): {answer}")


def answer_of(error: BaseException) -> str:
    """What the server answered (or why it could not be asked), on one line, without the URL."""
    text = _CLIENT.sub("", _URL.sub("", str(error)).strip()) or type(error).__name__
    return " ".join(text.split())[:400]


def transient(error: BaseException) -> bool:
    """Whether ``error`` is worth another try: no answer at all, or a passing fault."""
    code = getattr(error, "code", None)
    if isinstance(code, int):
        return code in TRANSIENT
    name = type(error).__name__
    # clickhouse-connect: OperationalError for a connection or an HTTP status without a server
    # exception; DatabaseError with a code for the server's exceptions (handled above).
    return name in ("OperationalError", "ConnectionError", "TimeoutError", "StreamFailureError")


def call(what: str, request: Callable[[], T], back_off: tuple[float, ...] = BACK_OFF) -> T:
    """``request()``, sent again after a passing fault; ``RequestFailedError`` when it keeps failing."""
    tries = 0
    while True:
        tries += 1
        try:
            return request()
        except Exception as error:
            if tries > len(back_off) or not transient(error):
                raise RequestFailedError(what, answer_of(error), tries) from error
            log.warning("ClickHouse request failed (%s), tried again: %s", what, answer_of(error))
            time.sleep(back_off[tries - 1])


def keys_data(keys: pa.Array, name: str = "wanted") -> Any:
    """Visit keys as external data: a temporary table ``name (session UInt64)`` in the request's
    body (RowBinary: 8 bytes a key), never a parameter."""
    from clickhouse_connect.driver.external import ExternalData

    raw = keys.cast(pa.uint64()).to_numpy(zero_copy_only=False).astype("<u8").tobytes()
    return ExternalData(file_name=name, data=raw, fmt="RowBinary", structure="session UInt64")


LARGE = 1000  # a bound list longer than this travels as external data (``lists_as_data``)
_SCALAR = frozenset({"Int64", "UInt64", "Int32", "UInt32", "Float64", "String"})


def _text(value: Any) -> str:
    """A value in TabSeparated's escaping."""
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def lists_as_data(sql: str, params: dict[str, Any]) -> tuple[str, dict[str, Any], Any]:
    """The query with each long bound list (``{name:Array(T)}``, more than ``LARGE`` values: a
    batch's sites, a report's selection) read from external data instead, a temporary table
    ``_name`` in the request's body, so no parameter grows with the data; and that data (None when
    every list is short)."""
    from clickhouse_connect.driver.external import ExternalData

    external: ExternalData | None = None
    kept = dict(params)
    for name, value in params.items():
        if not isinstance(value, list) or len(value) <= LARGE:
            continue
        found = re.search(r"\{" + re.escape(name) + r":Array\((\w+)\)\}", sql)
        if found is None or found.group(1) not in _SCALAR:
            continue
        rows = ("\n".join(_text(v) for v in value) + "\n").encode()
        table = f"_{name}"
        if external is None:
            external = ExternalData(
                file_name=table, data=rows, fmt="TabSeparated", structure=f"v {found.group(1)}"
            )
        else:
            external.add_file(file_name=table, data=rows, fmt="TabSeparated", structure=f"v {found.group(1)}")
        sql = sql.replace(found.group(0), f"(SELECT groupArray(v) FROM {table})")  # noqa: S608 (a fixed name)
        del kept[name]
    return sql, kept, external
