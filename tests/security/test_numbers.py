"""Every number a client sends (header, path, query, body) is read by one ASCII-only helper.

``str.isdigit()`` accepts ``²`` and ``①`` that ``int()`` refuses; before ``sightline.numbers`` such
values answered 500 with a traceback. This test sends look-alike numbers to every parameter and
header that reaches ``int()`` and wants a 4xx in the error shape and no traceback in the log.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from sightline.numbers import ascii_int
from tests.conftest import sign_in
from tests.recordings.helpers import RecordingSite, recording_site
from tests.support.http import TLS
from tests.support.server import LiveServer, create_owner

TRICKY = [
    "\u00b2",
    "\u2460",
    "\u0661",
    "\u0660\u0661",
    "1_0",
    " 1",
    "+1",
    "-1",
    "1e3",
    "0x10",
    "9" * 40,
    "",
    "1\n",
]
DOMAIN = "numbers.example"
ORIGIN = f"https://{DOMAIN}"


@pytest.mark.parametrize("text", TRICKY)
def test_ascii_int_refuses_everything_but_plain_ascii_digits(text: str) -> None:
    assert ascii_int(text) is None
    assert ascii_int(text.encode()) is None


def test_ascii_int_keeps_its_range() -> None:
    assert ascii_int("0") == 0
    assert ascii_int("065535", 1, 65535) == 65535
    assert ascii_int("65536", 1, 65535) is None
    assert ascii_int("0", 1) is None


@pytest.fixture(scope="module")
def target(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveServer, httpx.Client, RecordingSite]]:
    server = LiveServer(tmp_path_factory.mktemp("numbers") / "data").start()
    create_owner(server, "owner@example.com", "correct horse battery staple")
    client = sign_in(server, "owner@example.com", "correct horse battery staple")
    site = recording_site(client, DOMAIN)
    yield server, client, site
    client.close()
    server.stop()


def _no_server_error(server: LiveServer, response: httpx.Response, what: str) -> None:
    assert response.status_code < 500, f"{what} -> {response.status_code} {response.text}"
    if response.status_code >= 400 and response.content:
        assert set(response.json()["error"]) >= {"code", "message"}, what
    assert "Traceback" not in "".join(server.output), f"{what}\n{_traceback(server)}"


def _traceback(server: LiveServer) -> str:
    """The server's output from its first traceback on, so a failure shows what went wrong."""
    output = "".join(server.output)
    start = max(0, output.find("Traceback") - 400)
    return output[start : start + 4000] if "Traceback" in output else ""


@pytest.mark.parametrize("text", TRICKY[:4])
def test_look_alike_digits_in_any_number_never_answer_a_server_error(
    target: tuple[LiveServer, httpx.Client, RecordingSite], text: str
) -> None:
    server, owner, site = target
    with httpx.Client(verify=TLS, base_url=server.base_url, timeout=30) as raw:
        _send_everywhere(server, owner, site, raw, text)


def _send_everywhere(
    server: LiveServer, owner: httpx.Client, site: RecordingSite, raw: httpx.Client, text: str
) -> None:
    q = quote(text)
    origins = [f"http://{DOMAIN}:{text}", f"http://[::1]:{text}"]
    encoded = [o.encode("utf-8") for o in origins]
    encoded += [o.encode("latin-1") for o in origins if all(ord(c) < 256 for c in o)]
    for header in encoded:
        for name in (b"Origin", b"Referer"):
            sent = {name: header + (b"/page" if name == b"Referer" else b"")}
            _no_server_error(
                server, raw.post(f"/i/events?key={site.key}", headers=sent, content=b"{}"), name.decode()
            )
            _no_server_error(server, raw.get(f"/i/config?key={site.key}", headers=sent), name.decode())
            preflight = {**sent, b"Access-Control-Request-Method": b"POST"}
            _no_server_error(server, raw.options("/i/events", headers=preflight), f"OPTIONS {name.decode()}")
            chunk = f"/i/recordings/{'a' * 22}/chunks?key={site.key}&seq=0"
            _no_server_error(server, raw.post(chunk, headers=sent, content=b"x"), f"chunk {name.decode()}")
    headers = {"Origin": ORIGIN}
    checks = {
        "seq": raw.post(
            f"/i/recordings/{'a' * 22}/chunks?key={site.key}&seq={q}", headers=headers, content=b"x"
        ),
        "survey id": raw.get(f"/i/feedback/surveys/{q}?key={site.key}", headers=headers),
        "domain port": owner.post("/api/sites", json={"name": "x", "domain": f"example.com:{text}"}),
        "ipv6 port": owner.post("/api/sites", json={"name": "x", "domain": f"[::1]:{text}"}),
        "site id": owner.get(f"/api/sites/{q}/recordings"),
        "limit": owner.get(f"/api/sites/{site.id}/reports/breakdown?dimension=pages&limit={q}"),
        "offset": owner.get(f"/api/sites/{site.id}/recordings?offset={q}"),
        "survey offset": owner.get(f"/api/feedback/surveys/1/export?offset={q}"),
        "revision": owner.get(f"/api/feedback/surveys/1/summary?revision={q}"),
        "revision path": owner.get(f"/api/feedback/surveys/1/revisions/{q}"),
    }
    for what, response in checks.items():
        _no_server_error(server, response, what)
        assert 400 <= response.status_code < 500, what


def _raw_request(server: LiveServer, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        return sock.recv(65536)


@pytest.mark.parametrize("path", ["/api/login", "/i/events?key=x", "/api/sites"])
def test_a_content_length_in_look_alike_digits_is_refused(
    target: tuple[LiveServer, httpx.Client, RecordingSite], path: str
) -> None:
    server, _, _ = target
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {server.origin}\r\n"
        "Content-Type: application/json\r\nContent-Length: \xb2\r\n\r\n{}"
    )
    answer = _raw_request(server, head.encode("latin-1"))
    status = int(answer.split(b" ", 2)[1])
    assert 400 <= status < 500, answer[:200]
    assert "Traceback" not in "".join(server.output), _traceback(server)


def test_a_deeply_nested_unknown_field_is_malformed_json_not_a_server_error(
    target: tuple[LiveServer, httpx.Client, RecordingSite],
) -> None:
    server, _, site = target
    with httpx.Client(verify=TLS, base_url=server.base_url, timeout=30) as raw:
        body = b'{"x":' + b"[" * 1000
        response = raw.post(f"/i/events?key={site.key}", headers={"Origin": ORIGIN}, content=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "malformed_json"
    assert "Traceback" not in "".join(server.output), _traceback(server)
