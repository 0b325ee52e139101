"""A stand-in for a ClickHouse server's HTTP interface, for the tests: it executes each request with
chDB (the ClickHouse engine, embedded) and refuses what a server with default settings refuses
before a query runs.

It speaks the interface as far as Sightline's engine and clickhouse-connect's HTTP client use it:
``GET``/``POST /`` with the query in the URL or the body (an ``INSERT ... FORMAT X`` followed by
its data in the body), ``param_NAME`` query parameters (in the URL or in multipart form fields),
settings as URL parameters (applied to the query: ``insert_deduplication_token`` reaches the
engine's deduplication), ``database``, external data (multipart file parts with
``NAME_format``/``NAME_structure``/``NAME_types``), compressed request bodies
(``Content-Encoding``: lz4, zstd, gzip, deflate) and responses (``enable_http_compression`` with
``Accept-Encoding``), ``GET /ping``, and errors as the server sends them (a status, the
``X-ClickHouse-Exception-Code`` header, ``Code: N. DB::Exception: ...`` in the body). ``GET``
runs read-only queries only, as on a server.

Limits it enforces with the server's documented defaults: ``http_max_uri_size`` (1 MiB),
``http_max_field_name_size`` and ``http_max_field_value_size`` (128 KiB, for every URL parameter,
header and form field that is not a file), ``http_max_fields`` (1,000,000) and
``http_max_multipart_form_data_size`` (1 GiB); ``max_query_size``, ``max_ast_elements`` and the
other query limits are chDB's own, the same engine with the same defaults (checked at start).

Not checked (a real server is needed: ``SIGHTLINE_TEST_CLICKHOUSE_URL``): authentication and
users' profiles, ClickHouse's own compressed framing (``compress=1``/``decompress=1``: refused
here), sessions (``session_id`` is accepted and ignored; requests run one at a time), progress
headers, replication and clusters, and the server's timing and memory under load.

Run: ``python -m tests.support.clickhouse DATA_DIR PORT`` (loopback only); ``StandIn`` starts it.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx

LIMITS = {
    "http_max_uri_size": 1_048_576,
    "http_max_field_name_size": 131_072,
    "http_max_field_value_size": 131_072,
    "http_max_fields": 1_000_000,
    "http_max_multipart_form_data_size": 1_073_741_824,
}
ENGINE_DEFAULTS = {
    "max_query_size": "262144",
    "max_ast_elements": "50000",
    "max_expanded_ast_elements": "500000",
}
NOT_SETTINGS = {
    "query",
    "database",
    "user",
    "password",
    "query_id",
    "session_id",
    "session_timeout",
    "session_check",
    "default_format",
    "client_protocol_version",
    "compress",
    "decompress",
    "wait_end_of_query",
    "buffer_size",
    "stacktrace",
    "role",
    "quota_key",
}
READ_ONLY = re.compile(r"^\s*(SELECT|WITH|SHOW|DESC|DESCRIBE|EXISTS|EXPLAIN)\b", re.IGNORECASE)
INSERT_DATA = re.compile(
    rb"^\s*(INSERT\s+INTO\s+.*?)\s+FORMAT\s+(\w+)[ \t]*(?:\r?\n)?", re.IGNORECASE | re.DOTALL
)
TRAILING_FORMAT = re.compile(r"\bFORMAT\s+(\w+)\s*;?\s*$", re.IGNORECASE)
CODE = re.compile(r"Code: (\d+)")


class RefusedError(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


def _limit(what: str, size: int, setting: str) -> None:
    if size > LIMITS[setting]:
        raise RefusedError(400, 36, f"{what} is {size} bytes, over {setting} ({LIMITS[setting]})")


def _decompress(data: bytes, encoding: str | None) -> bytes:
    if not encoding or encoding == "identity":
        return data
    if encoding == "lz4":
        import lz4.frame  # type: ignore[import-untyped]

        return bytes(lz4.frame.decompress(data))
    if encoding == "zstd":
        from clickhouse_connect.driver.compression import _zstd_decompress

        return bytes(_zstd_decompress(data))
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "deflate":
        return zlib.decompress(data)
    raise RefusedError(400, 36, f"unknown Content-Encoding {encoding}")


def _multipart(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, bytes]]:
    """The form's text fields and its files (external tables), by name."""
    _limit("the multipart form", len(body), "http_max_multipart_form_data_size")
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    fields: dict[str, str] = {}
    files: dict[str, bytes] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        payload = payload if isinstance(payload, bytes) else b""
        if not isinstance(name, str):
            raise RefusedError(400, 36, "a form part without a name")
        _limit(f"the form field name {name[:40]!r}", len(name), "http_max_field_name_size")
        if part.get_filename() is not None:
            files[name] = payload
        else:
            _limit(f"the form field {name[:40]!r}", len(payload), "http_max_field_value_size")
            fields[name] = payload.decode()
    return fields, files


class Executor:
    """One chDB connection; requests run one at a time."""

    def __init__(self, path: str) -> None:
        import chdb

        self.con = chdb.connect(path)  # type: ignore[no-untyped-call]
        self.lock = threading.Lock()
        # What the connection holds from the request before: its database and the settings it set.
        # A request changes only what differs (a statement of chDB's costs 0.4 ms of CPU, and a
        # client sends five or more settings with every request); what it does not set is DEFAULT.
        self.database: str | None = None
        self.settings: dict[str, str] = {}
        found = dict(
            self._rows(
                "SELECT name, value FROM system.settings WHERE name IN "
                f"({', '.join(repr(n) for n in ENGINE_DEFAULTS)})"
            )
        )
        if found != ENGINE_DEFAULTS:
            raise SystemExit(f"chDB's query limits differ from a server's defaults: {found}")

    def _rows(self, sql: str) -> list[list[str]]:
        text = self.con.query(sql, "TabSeparated").bytes().decode()
        return [line.split("\t") for line in text.splitlines()]

    def run(
        self,
        sql: bytes,
        data: bytes | None,
        params: dict[str, str],
        settings: dict[str, str],
        database: str,
        external: dict[str, tuple[bytes, str, str]],
        fmt: str,
    ) -> bytes:
        with self.lock, tempfile.TemporaryDirectory() as scratch:
            if database != self.database:
                self.database = None
                self.con.query(f"USE `{database}`", "TabSeparated")
                self.database = database
            self._settle(settings)
            try:
                for name, (raw, form, structure) in external.items():
                    path = Path(scratch) / f"{name}.data"
                    path.write_bytes(raw)
                    self.con.query(
                        f"CREATE TEMPORARY TABLE `{name}` ({structure}) ENGINE = Memory", "TabSeparated"
                    )
                    self.con.query(
                        f"INSERT INTO `{name}` SELECT * FROM file({_literal(str(path))}, "
                        f"{_literal(form)}, {_literal(structure)})",
                        "TabSeparated",
                    )
                if data is not None:  # INSERT INTO t ... FORMAT X, the data after it
                    path = Path(scratch) / "insert.data"
                    path.write_bytes(data)
                    statement, form_name = sql.split(b"\x00")
                    sql = statement + f" FROM INFILE {_literal(str(path))} FORMAT ".encode() + form_name
                result = self.con.query(sql.decode(), fmt, params=params)
                return bytes(result.bytes() or b"")
            finally:
                for name in external:
                    with contextlib.suppress(Exception):
                        self.con.query(f"DROP TEMPORARY TABLE IF EXISTS `{name}`", "TabSeparated")

    def _settle(self, settings: dict[str, str]) -> None:
        """The request's settings set, every other one back at its default."""
        for name in [n for n in self.settings if n not in settings]:
            del self.settings[name]
            with contextlib.suppress(Exception):
                self.con.query(f"SET {name} = DEFAULT", "TabSeparated")
        for name, value in settings.items():
            if self.settings.get(name) != value:
                self.settings[name] = "\x00unknown"  # if refused: set or reset by the next request
                self.con.query(f"SET {name} = {_literal(value)}", "TabSeparated")
                self.settings[name] = value


def _literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def make_app(executor: Executor) -> Any:
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    async def ping(_: Request) -> Response:
        return PlainTextResponse("Ok.\n")

    async def root(request: Request) -> Response:
        body = await request.body()
        try:
            return await run_in_threadpool(_handle, executor, request, body)
        except RefusedError as refused:
            said = str(refused)
            text = (
                said if said.startswith("Code:") else f"Code: {refused.code}. DB::Exception: {said}"
            ) + "\n"
            return PlainTextResponse(text, refused.status, {"X-ClickHouse-Exception-Code": str(refused.code)})

    return Starlette(routes=[Route("/ping", ping), Route("/", root, methods=["GET", "POST"])])


def _handle(executor: Executor, request: Any, body: bytes) -> Any:
    from starlette.responses import Response

    raw_query = request.scope.get("query_string", b"")
    _limit("the URI", len(request.scope.get("raw_path", b"/")) + 1 + len(raw_query), "http_max_uri_size")
    url = parse_qsl(raw_query.decode(), keep_blank_values=True)
    for name, value in [*url, *request.headers.items()]:
        _limit(f"the field name {name[:40]!r}", len(name.encode()), "http_max_field_name_size")
        _limit(f"the field {name[:40]!r}", len(value.encode()), "http_max_field_value_size")
    params = dict(url)
    if params.get("compress") == "1" or params.get("decompress") == "1":
        raise RefusedError(400, 48, "ClickHouse's own compressed framing is not spoken by this stand-in")
    body = _decompress(body, request.headers.get("content-encoding"))
    fields: dict[str, str] = {}
    files: dict[str, bytes] = {}
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        fields, files = _multipart(content_type, body)
        body = b""
    if len(url) + len(request.headers) + len(fields) > LIMITS["http_max_fields"]:
        raise RefusedError(400, 36, "too many fields, over http_max_fields")
    query_text = (fields.get("query") or params.get("query", "")).encode()
    if query_text and body:
        query_text += b"\n" + body
    elif body:
        query_text = body
    external = {}
    for name, raw in files.items():
        structure = params.get(f"{name}_structure") or ", ".join(
            f"_{i + 1} {kind.strip()}" for i, kind in enumerate(params.get(f"{name}_types", "").split(","))
        )
        external[name] = (raw, params.get(f"{name}_format", "TabSeparated"), structure)
    bound = {k[6:]: v for k, v in [*params.items(), *fields.items()] if k.startswith("param_")}
    settings = {
        k: v
        for k, v in params.items()
        if k not in NOT_SETTINGS
        and not k.startswith("param_")
        and not any(k.startswith(f"{name}_") for name in files)
    }
    data: bytes | None = None
    sql = query_text
    inserting = INSERT_DATA.match(query_text[: 2 * 262_144])
    if inserting and not re.search(rb"\bSELECT\b", inserting.group(1), re.IGNORECASE):
        sql = inserting.group(1) + b"\x00" + inserting.group(2)
        data = query_text[inserting.end() :]
    text = (inserting.group(1) if inserting else query_text).decode(errors="replace")
    if request.method == "GET" and not READ_ONLY.match(text):
        raise RefusedError(400, 164, "Cannot execute query in readonly mode: method GET implies readonly")
    fmt = params.get("default_format", "TabSeparated")
    try:
        out = executor.run(sql, data, bound, settings, params.get("database", "default"), external, fmt)
    except RefusedError:
        raise
    except Exception as error:
        message = str(error).strip()
        found = CODE.search(message)
        raise RefusedError(
            500 if found is None else 400, int(found.group(1)) if found else 1000, message
        ) from error
    headers = {
        "X-ClickHouse-Query-Id": str(uuid.uuid4()),
        "X-ClickHouse-Timezone": "UTC",
        "X-ClickHouse-Summary": json.dumps({"read_rows": "0", "written_rows": "0"}),
    }
    trailing = TRAILING_FORMAT.search(text) if not inserting else None
    if trailing:
        headers["X-ClickHouse-Format"] = trailing.group(1)
    elif READ_ONLY.match(text):
        headers["X-ClickHouse-Format"] = fmt
    accepted = [e.strip() for e in request.headers.get("accept-encoding", "").split(",")]
    if params.get("enable_http_compression") == "1" and out:
        if "lz4" in accepted:
            import lz4.frame

            out, headers["Content-Encoding"] = lz4.frame.compress(out), "lz4"
        elif "gzip" in accepted:
            out, headers["Content-Encoding"] = gzip.compress(out, 1), "gzip"
    return Response(out, 200, headers, media_type="application/octet-stream")


class StandIn:
    """The stand-in as a process of its own, on a loopback port."""

    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, database: str) -> str:
        """A database's ``--events-url`` (created first)."""
        response = httpx.post(self.http + "/", content=f"CREATE DATABASE IF NOT EXISTS {database}")
        response.raise_for_status()
        return f"clickhouse://default:@127.0.0.1:{self.port}/{database}"

    def start(self, timeout: float = 60) -> StandIn:
        root = Path(__file__).resolve().parents[2]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.clickhouse", str(self.directory), str(self.port)],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("the ClickHouse stand-in exited at start")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.http + "/ping", timeout=2).status_code == 200:
                    return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("the ClickHouse stand-in did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class RealServer:
    """A ClickHouse server named by ``SIGHTLINE_TEST_CLICKHOUSE_URL`` (``clickhouse://USER:PASS@HOST:8123``):
    the same tests, against the real thing."""

    def __init__(self, url: str) -> None:
        self.base = url.rstrip("/")

    def url(self, database: str) -> str:
        import clickhouse_connect

        client = clickhouse_connect.get_client(dsn=self.base.replace("clickhouse://", "http://", 1))
        try:
            client.command(f"CREATE DATABASE IF NOT EXISTS {database}")
        finally:
            client.close()
        return f"{self.base}/{database}"


def main() -> None:
    import uvicorn

    directory, port = sys.argv[1], int(sys.argv[2])
    app = make_app(Executor(directory))
    # h11 would refuse a request line over 16 KiB: the URI's limit is the server's, checked above.
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        h11_max_incomplete_event_size=2 * LIMITS["http_max_uri_size"],
    )


if __name__ == "__main__":
    main()
