"""No request without a session can make the server hold its body: every path that reads one caps
it while reading, after the cheap checks (the link, Origin, content type), on a live server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.recordings.helpers import recording_site
from tests.support.browser import DESKTOP_CHROME
from tests.support.server import LiveServer, create_owner

BODY = 16 * 2**20  # each request's chunked body
GROWTH = 8 * 2**20  # the most the server's resident memory may grow while they arrive
MISSING_TOKEN = "A" * 43


@dataclass(frozen=True)
class Served:
    live: LiveServer
    token: str  # a shared link's, with a password
    key: str  # a site's that records sessions
    site_origin: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    live = LiveServer(
        tmp_path_factory.mktemp("bodies") / "data", env={"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true"}
    )
    live.start()
    try:
        create_owner(live, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(live)
        site = recording_site(owner, "bodies.example")
        share = owner.post(f"/api/sites/{site.id}/shares", json={"password": "open sesame"}).json()
        owner.close()
        token = share["url"].rsplit("/share/", 1)[1]
        yield Served(live, token, site.key, site.origin)
    finally:
        live.stop()


def _paths(server: Served) -> list[tuple[str, dict[str, str]]]:
    """Every path a client without a session may send a body to, with the headers that pass each
    one's cheap checks (so that only the size can stop the body)."""
    console = {"Origin": server.live.origin, "Content-Type": "application/json"}
    sdk = {"Origin": server.site_origin, "Content-Type": "text/plain", "User-Agent": DESKTOP_CHROME}
    token = server.token
    return [
        (f"/share/{token}/api/unlock", console),
        (f"/share/{MISSING_TOKEN}/api/unlock", console),
        (f"/share/{token}/api/reports/summary", console),
        ("/api/login", console),
        ("/setup", console),
        ("/api/invitations/accept", console),
        ("/api/invitations/lookup", console),
        ("/api/sites", console),
        (f"/unsubscribe/{MISSING_TOKEN}", console),
        (f"/unsubscribe/{MISSING_TOKEN}/undo", console),
        ("/i/events", sdk),
        ("/i/feedback/responses", sdk),
        (f"/i/recordings/{'r' * 22}/chunks?key={server.key}&seq=0", sdk),
        ("/nothing-here", console),
    ]


def _resident(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _chunks(size: int) -> Iterator[bytes]:
    piece = b'{"password": "' + b"a" * (64 * 1024 - 14)
    for _ in range(size // len(piece)):
        yield piece


def _post(base_url: str, path: str, headers: dict[str, str], size: int, answers: list[int]) -> None:
    try:
        with httpx.Client(base_url=base_url, timeout=60) as client:
            answers.append(client.post(path, headers=headers, content=_chunks(size)).status_code)
    except httpx.HTTPError:
        answers.append(0)  # the server stopped reading and closed the connection: refused


def test_large_chunked_bodies_on_every_open_path_leave_the_servers_memory_as_it_was(
    server: Served,
) -> None:
    live = server.live
    assert live.process is not None
    pid = live.process.pid
    paths = _paths(server)
    for _ in range(2):  # warm: each path's code loaded, each pool's threads started
        for path, headers in paths:
            _post(live.base_url, path, headers, 256 * 1024, [])
    time.sleep(0.5)
    before = _resident(pid)
    peak = before
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _resident(pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    answers: list[int] = []
    senders = [
        threading.Thread(target=_post, args=(live.base_url, path, headers, BODY, answers))
        for path, headers in paths
        for _ in range(2)
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    done.set()
    sampler.join()
    after = _resident(pid)
    print(
        f"VmRSS before {before / 2**20:.1f} MiB, peak {peak / 2**20:.1f} MiB, after {after / 2**20:.1f} MiB"
    )
    assert len(answers) == len(senders)
    assert all(code < 500 for code in answers), answers
    assert peak - before <= GROWTH, f"grew by {(peak - before) / 2**20:.1f} MiB"
    with live.client() as client:
        assert client.get("/healthz").status_code == 200


def _first_answer(live: LiveServer, path: str, headers: dict[str, str], sent: int) -> bytes:
    """The status line the server sends after ``sent`` bytes of a chunked body that never ends."""
    host = urlsplit(live.base_url)
    head = f"POST {path} HTTP/1.1\r\nHost: {host.netloc}\r\nTransfer-Encoding: chunked\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    with socket.create_connection((host.hostname, host.port), timeout=10) as conn:
        conn.sendall(head.encode("latin-1"))
        piece = b"a" * 1024
        for _ in range(sent // len(piece)):
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        try:
            return conn.recv(200).split(b"\r\n", 1)[0]
        except TimeoutError:
            return b"no answer while the body was still coming"


@pytest.mark.parametrize(
    ("what", "path", "headers", "sent", "status"),
    [
        ("a link that does not exist", f"/share/{MISSING_TOKEN}/api/unlock", {}, 1024, b"404"),
        ("a foreign Origin", "/share/{token}/api/unlock", {"Origin": "http://evil.example"}, 1024, b"403"),
        ("no JSON content type", "/share/{token}/api/unlock", {"Content-Type": "text/plain"}, 1024, b"415"),
        ("a body over 8 KiB", "/share/{token}/api/unlock", {}, 20 * 1024, b"413"),
        ("a console body over 8 KiB", "/api/login", {}, 20 * 1024, b"413"),
        ("a foreign Origin at login", "/api/login", {"Origin": "http://evil.example"}, 1024, b"403"),
        ("an unknown site key", "/i/recordings/rrrrrrrrrrrrrrrrrrrrrr/chunks?key=nope&seq=0", {}, 1024, b"4"),
        ("an SDK body over its limit", "/i/events", {}, 200 * 1024, b"413"),
    ],
)
def test_an_open_path_answers_before_the_rest_of_a_refused_body_arrives(
    server: Served, what: str, path: str, headers: dict[str, str], sent: int, status: bytes
) -> None:
    live = server.live
    sent_headers = {"Origin": live.origin, "Content-Type": "application/json", **headers}
    line = _first_answer(live, path.replace("{token}", server.token), sent_headers, sent)
    assert line.startswith(b"HTTP/1.1 " + status), f"{what}: {line!r}"
