"""Hostile import files against a real server: damaged zips (a bad CRC, compression method 99, a
corrupt deflate stream), numbers no store can sum, and zips that unpack out of proportion are each
refused with 4xx naming the problem, and the same keep-alive connection goes on working."""

from __future__ import annotations

import http.client
import io
import struct
import uuid
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import httpx
import pytest

from sightline.database import open_database
from sightline.database.schema import imported_figures, imports
from tests.imports.helpers import csv_text, plausible_zip, upload
from tests.support.server import LiveServer

DAY = datetime.now(UTC).date() - timedelta(days=30)
VISITORS = "imported_visitors_20240101_20240131.csv"


def _site(owner: httpx.Client) -> int:
    made = owner.post(
        "/api/sites", json={"name": "Hostile", "domain": f"{uuid.uuid4().hex[:10]}.example.com"}
    )
    assert made.status_code == 201, made.text
    return int(made.json()["id"])


def _visitors(rows: int = 3, visitors: int = 5) -> str:
    header = ["date", "visitors", "pageviews", "bounces", "visits", "visit_duration"]
    days = [DAY + timedelta(days=n) for n in range(rows)]
    return csv_text(header, [[d.isoformat(), visitors, 9, 1, 4, 100] for d in days])


def deflated(files: dict[str, str]) -> bytes:
    """A zip whose members are deflated (``plausible_zip`` stores them)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _zip() -> bytearray:
    return bytearray(deflated({VISITORS: _visitors(200)}))


def _central(body: bytearray) -> int:
    return body.index(b"PK\x01\x02")


def bad_crc() -> bytes:
    body = _zip()
    for at in (14, _central(body) + 16):  # the local header's CRC-32, and the central directory's
        body[at : at + 4] = struct.pack("<I", 0x12345678)
    return bytes(body)


def method_99() -> bytes:
    body = _zip()
    for at in (8, _central(body) + 10):
        body[at : at + 2] = struct.pack("<H", 99)
    return bytes(body)


def corrupt_deflate() -> bytes:
    body = _zip()
    name_length, extra_length = struct.unpack("<HH", body[26:30])
    data = 30 + name_length + extra_length
    body[data : data + 8] = b"\xff" * 8  # a reserved block type: zlib refuses the stream
    return bytes(body)


DAMAGED = [
    ("a bad CRC", bad_crc, "CRC"),
    ("method 99", method_99, "method 99"),
    ("corrupt deflate", corrupt_deflate, "corrupt"),
]


class KeepAlive:
    """One HTTP/1.1 connection reused for every request (http.client raises when it was reset)."""

    def __init__(self, server: LiveServer, owner: httpx.Client) -> None:
        parts = urlsplit(server.base_url)
        self.connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        cookie = "; ".join(f"{k}={v}" for k, v in owner.cookies.items())
        self.headers = {"Cookie": cookie, "Origin": server.origin}

    def request(
        self, method: str, path: str, body: bytes | None = None, kind: str | None = None
    ) -> tuple[int, bytes]:
        headers = dict(self.headers)
        if kind:
            headers["Content-Type"] = kind
        self.connection.request(method, path, body=body, headers=headers)
        answer = self.connection.getresponse()
        return answer.status, answer.read()

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def kept(console_server: LiveServer, owner: httpx.Client) -> Iterator[KeepAlive]:
    connection = KeepAlive(console_server, owner)
    yield connection
    connection.close()


@pytest.mark.parametrize(("case", "make", "words"), DAMAGED, ids=[c[0] for c in DAMAGED])
def test_a_damaged_zip_is_422_naming_the_member_and_the_connection_goes_on(
    owner: httpx.Client, kept: KeepAlive, case: str, make: object, words: str
) -> None:
    site_id = _site(owner)
    assert callable(make)
    status, body = kept.request(
        "POST", f"/api/sites/{site_id}/imports?filename=export.zip", make(), "application/zip"
    )
    assert status == 422, body
    error = httpx.Response(status, content=body).json()["error"]
    assert error["code"] == "invalid_import"
    assert error["field"] == VISITORS
    assert VISITORS in error["message"]
    assert words in error["message"]
    again, listed = kept.request("GET", f"/api/sites/{site_id}/imports")
    assert again == 200
    assert httpx.Response(again, content=listed).json()["imports"] == []


@pytest.mark.parametrize("value", ["1000000000000000", "99999999999999999999999", "1000000001"])
def test_numbers_no_report_could_sum_are_refused_naming_the_place(owner: httpx.Client, value: str) -> None:
    site_id = _site(owner)
    text = _visitors(2).replace(",5,9,", f",{value},9,", 1)
    response = upload(owner, site_id, "export.zip", plausible_zip({VISITORS: text}))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == f"{VISITORS}:2:visitors"
    assert "more than the 1,000,000,000 a row may hold" in response.json()["error"]["message"]
    daily = csv_text(
        ["date", "visitors", "visits", "pageviews", "visit_duration"], [[DAY.isoformat(), 1, 10**9, 1, 10**6]]
    )
    refused = upload(owner, site_id, "days.csv", daily.encode())
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == "days.csv:2:visit_duration"


def test_a_zip_that_unpacks_out_of_proportion_is_413(owner: httpx.Client) -> None:
    site_id = _site(owner)
    rows = 150_000
    text = _visitors(1) + (f"{DAY.isoformat()},1,1,0,1,1\n" * rows)
    packed = deflated({VISITORS: text})
    assert len(text) > 40 * len(packed)
    assert len(text) > 2**20
    response = upload(owner, site_id, "export.zip", packed)
    assert response.status_code == 413, response.text
    assert response.json()["error"]["code"] == "import_too_large"
    assert "40 times its own size" in response.json()["error"]["message"]


def test_reports_over_figures_whose_sum_overflows_answer_and_health_agrees(
    console_server: LiveServer, owner: httpx.Client
) -> None:
    site_id = _site(owner)
    assert console_server.database_url is not None
    database = open_database(console_server.database_url, migrate=False)
    huge = 5 * 10**18  # two of them overflow a 64-bit integer (a database restored from elsewhere)
    try:
        with database.begin() as conn:
            import_id = conn.execute(
                imports.insert()
                .values(
                    site_id=site_id,
                    kind="daily",
                    filename="old.csv",
                    checksum="0" * 64,
                    status="done",
                    size_bytes=1,
                    read_bytes=1,
                    rows=2,
                    first_day=DAY,
                    last_day=DAY,
                    tables=["old.csv"],
                    created_at=datetime.now(UTC),
                    finished_at=datetime.now(UTC),
                )
                .returning(imports.c.id)
            ).scalar_one()
            row = {
                "import_id": import_id,
                "site_id": site_id,
                "day": DAY,
                "value": "",
                "visitors": huge,
                "visits": huge,
                "pageviews": huge,
                "bounces": 0,
                "duration": 0,
                "events": 0,
            }
            conn.execute(
                imported_figures.insert(), [{**row, "dimension": "total"}, {**row, "dimension": "total"}]
            )
    finally:
        database.dispose()
    period = {"range": "custom", "from": DAY.isoformat(), "to": DAY.isoformat()}
    summary = owner.get(f"/api/sites/{site_id}/reports/summary", params=period)
    assert summary.status_code == 200, summary.text
    assert summary.json()["current"]["visitors"] >= huge
    assert owner.get("/api/health").json()["services"]["database"]["status"] == "ok"
