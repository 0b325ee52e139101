"""How ``sightline serve`` runs uvicorn: its options from the settings, and the limits on slow
clients that uvicorn does not have.

uvicorn (httptools) closes an idle keep-alive connection after ``timeout_keep_alive``, and
``limit_concurrency`` answers 503 beyond a number of connections, but a connection that never
finishes its headers is kept forever: thousands of them exhaust the file descriptors and every
new request, ``/healthz`` included, is refused. ``SlowClientLimits`` is uvicorn's httptools
protocol with:

- a header-read timeout: a request's headers must arrive within ``header_timeout_seconds`` of
  the connection's start or of the previous answer on it, else the connection is closed;
- a body timeout: the body must arrive within ``body_timeout_seconds`` after the headers; a file
  uploaded to an import (``STREAMED``, up to ``--import-max-mb``) must instead keep coming: each
  ``STREAM_STEP`` bytes received give it ``body_timeout_seconds`` more;
- a header size cap (``MAX_HEADER_BYTES``): beyond it 431 and the connection is closed;
- a connection cap (``max_connections``): a new connection beyond it first closes the one that
  has waited longest for its headers (a slow client, or an idle keep-alive connection), else the
  one whose body has been arriving longest (an upload's counts from its last ``STREAM_STEP``):
  connections that dribble their bodies cannot hold the capacity, and a request whose body
  arrives whole (with its headers, so it never waits for its body) is still served. Only when
  every connection is busy with a request whose body has arrived does uvicorn's
  ``limit_concurrency`` answer the new one 503. The cap is kept below the process's open-file
  limit, which is raised to its hard limit if needed.

The deadlines (these two and uvicorn's keep-alive one) are times kept on each connection, not a
timer each: one sweep per server, every tenth of the shortest timeout (at most once a second),
closes the connections past theirs, so a connection is closed at most that much after its
deadline. A timer per deadline cost three timers started and cancelled per request on the
ingest hot path (docs/performance.md).

Each response's head and first body part leave in one write (``OneWrite``): one system call
and one wake-up of the client per answer instead of two. Closed connections are counted and
logged at most once a minute. uvicorn's own main loop wakes once a second instead of ten times
(``Server``). May import: ``sightline.settings``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import resource
import time
import weakref
from collections import Counter
from typing import Any, ClassVar

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from sightline.settings import Settings

log = logging.getLogger("sightline.serving")

MAX_HEADER_BYTES = 64 * 1024
RESERVED_FILES = 256  # descriptors left for the database, logs, pipes, the store and its files
MIN_CONNECTIONS = 16
LOG_EVERY_SECONDS = 60.0
TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
)
TOO_LARGE_BODY = (
    b'{"error":{"code":"headers_too_large","message":"The request\'s headers are larger than '
    + str(MAX_HEADER_BYTES).encode()
    + b' bytes."}}'
)


# Paths whose body is a file streamed to disk (an import), and the bytes that re-arm its timeout.
STREAMED = re.compile(rb"/api/sites/[0-9]+/imports(\?.*)?")
STREAM_STEP = 64 * 1024
SWEEP_SHARE = 0.1  # the sweep runs every tenth of the shortest timeout ...
SWEEP_MAX = 1.0  # ... and at least once a second
SWEEP_MIN = 0.01
TICK_SECONDS = 1.0  # uvicorn's main loop: between two renewals of the Date header


class Server(uvicorn.Server):
    """uvicorn's server, whose main loop sleeps a second between two turns instead of a tenth.

    uvicorn's loop wakes ten times a second to see whether it should stop, and renews the Date
    header every tenth turn: on an idle server those wake-ups were most of the server's CPU (about
    1.7 ms a second, measured with `python -m bench idle`). Here each turn renews the header, whose
    resolution is a second anyway, and asking the server to stop (``should_exit``, which uvicorn's
    signal handler sets) wakes the loop at once: a stop is as prompt as before.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        self._wake: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        super().__init__(config)

    @property
    def should_exit(self) -> bool:
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._should_exit = value
        if value and self._wake is not None:
            loop, event = self._wake
            loop.call_soon_threadsafe(event.set)

    async def main_loop(self) -> None:
        stop = asyncio.Event()
        self._wake = (asyncio.get_running_loop(), stop)
        turn = 0
        while not await self.on_tick(turn):
            turn = (turn + 10) % 864000  # uvicorn renews the header when this is a multiple of 10
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TICK_SECONDS):
                    await stop.wait()
        self._wake = None


class SlowClientLimits(HttpToolsProtocol):
    """uvicorn's httptools protocol, with the limits above (class attributes, set by ``options``)."""

    header_timeout: ClassVar[float] = 10.0
    body_timeout: ClassVar[float] = 30.0
    max_connections: ClassVar[int] = 1000
    closed: ClassVar[Counter[str]] = Counter()  # connections closed, by reason
    _logged_at: ClassVar[float] = 0.0
    _logged: ClassVar[Counter[str]] = Counter()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._due = 0.0  # the loop time at which the connection is closed for _reason (0: none)
        self._idle_due = 0.0  # the loop time at which an idle keep-alive connection is closed (0: none)
        self._reason = ""
        self._header_bytes = 0
        self._refused = False
        self._url = b""
        self._streamed = False  # this request's body is an uploaded file (STREAMED)
        self._since_armed = 0  # its bytes received since its timeout was last armed
        self.waiting_since: float | None = None  # waiting for a request's headers since
        self.body_since: float | None = None  # reading a request's body since (or its last step)

    # -- deadlines ---------------------------------------------------------------------------

    def _arm(self, seconds: float, reason: str) -> None:
        self._reason = reason
        self._due = self.loop.time() + seconds

    def _disarm(self) -> None:
        self._due = 0.0

    def _expire(self) -> None:
        self._due = 0.0
        self._close(self._reason)

    def _close(self, reason: str) -> None:
        self.waiting_since = self.body_since = None  # no longer a candidate to make room
        # Not counted from now on: uvicorn drops it only at connection_lost, a loop turn later,
        # and a request parsed meanwhile would find the server full (limit_concurrency).
        self.connections.discard(self)
        if not self.transport.is_closing():
            self.transport.close()
            _note(reason)

    def _wait_for_headers(self) -> None:
        self.waiting_since = self.loop.time()
        self._arm(self.header_timeout, "header_timeout")

    # -- uvicorn's callbacks -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._wait_for_headers()
        _Sweep.of(self)
        if len(self.connections) > self.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._idle_due = 0.0
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._idle_due = 0.0  # no longer idle (uvicorn cancels its keep-alive timer here)
        super().data_received(data)

    def on_message_begin(self) -> None:
        self._header_bytes = 0
        self._url = b""
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        if self._counted(len(url)):
            self._url += url  # httptools may hand the URL over in pieces
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._counted(len(name) + len(value)):
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self.waiting_since = None
        self.body_since = self.loop.time()
        self._streamed = self._url.startswith(b"/api/sites/") and STREAMED.fullmatch(self._url) is not None
        self._since_armed = 0
        self._arm(self.body_timeout, "body_timeout")
        super().on_headers_complete()
        if self.cycle is not None and self.cycle.transport is self.transport:
            self.cycle.transport = OneWrite(self.transport, self.loop)  # type: ignore[assignment]

    def on_body(self, body: bytes) -> None:
        if self._refused:
            return
        if self._streamed:
            self._since_armed += len(body)
            if self._since_armed >= STREAM_STEP:
                self._since_armed = 0
                self._arm(self.body_timeout, "body_timeout")
                self.body_since = self.loop.time()
        super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._disarm()
        self.body_since = None
        super().on_message_complete()

    def on_response_complete(self) -> None:
        """uvicorn's, with the keep-alive deadline kept on the connection instead of a timer."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:  # pipelined requests: the next one starts
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:  # idle now: closed after the keep-alive time, and the next headers are due
            self._wait_for_headers()
            self._idle_due = self.loop.time() + self.timeout_keep_alive

    # -- limits ------------------------------------------------------------------------------

    def _counted(self, size: int) -> bool:
        """Count header bytes; past the cap answer 431 once and ignore the rest of the request."""
        if self._refused:
            return False
        self._header_bytes += size
        if self._header_bytes <= MAX_HEADER_BYTES:
            return True
        self._refused = True
        self._disarm()
        if not self.transport.is_closing():
            self.transport.write(TOO_LARGE % (len(TOO_LARGE_BODY), TOO_LARGE_BODY))
        self._close("headers_too_large")
        return False

    def _make_room(self) -> None:
        """Over the cap: close the connection that has waited longest for its headers, else the
        one whose body has been arriving longest."""
        others = [c for c in self.connections if isinstance(c, SlowClientLimits) and c is not self]
        waiting = [c for c in others if c.waiting_since is not None]
        if waiting:
            min(waiting, key=lambda connection: connection.waiting_since or 0.0)._close("evicted")
            return
        reading = [c for c in others if c.body_since is not None]
        if reading:
            min(reading, key=lambda connection: connection.body_since or 0.0)._close("evicted")


class _Sweep:
    """One per server: every ``interval`` seconds, closes the connections past their deadline."""

    _of: ClassVar[weakref.WeakKeyDictionary[ServerState, _Sweep]] = weakref.WeakKeyDictionary()

    def __init__(self, protocol: SlowClientLimits) -> None:
        self.loop = protocol.loop
        self.connections = protocol.connections
        shortest = min(protocol.header_timeout, protocol.body_timeout, float(protocol.timeout_keep_alive))
        self.interval = max(SWEEP_MIN, min(SWEEP_MAX, shortest * SWEEP_SHARE))
        self.handle: asyncio.TimerHandle | None = None

    @classmethod
    def of(cls, protocol: SlowClientLimits) -> None:
        """Make sure the sweep of the protocol's server runs (it stops while no connection is open)."""
        sweep = cls._of.get(protocol.server_state)
        if sweep is None:
            sweep = cls._of[protocol.server_state] = cls(protocol)
        if sweep.handle is None:
            sweep.handle = sweep.loop.call_later(sweep.interval, sweep.run)

    def run(self) -> None:
        self.handle = None
        now = self.loop.time()
        for connection in list(self.connections):
            if not isinstance(connection, SlowClientLimits):
                continue
            if connection._idle_due and connection._idle_due <= now:
                connection._idle_due = 0.0
                connection.timeout_keep_alive_handler()  # uvicorn's: closed quietly
            elif connection._due and connection._due <= now:
                connection._expire()
        if self.connections:
            self.handle = self.loop.call_later(self.interval, self.run)


class OneWrite:
    """A response's transport that sends its status line and headers together with its first
    body part: one system call (and one wake-up of the client) instead of two.

    uvicorn writes the head when the application sends ``http.response.start`` and the body at
    ``http.response.body``, which applications send right after it. The head (the first write
    of the response) is held until the next write or the event loop's next turn, whichever
    comes first: nothing waits longer than that.
    """

    __slots__ = ("_first", "_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._first = True

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif self._first:
            self._first = False
            self._held = data
            self._loop.call_soon(self._release)
        else:
            self._transport.write(data)

    def _release(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():  # the client left meanwhile: nobody to send to
                self._transport.write(held)

    def close(self) -> None:
        self._release()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _note(reason: str) -> None:
    SlowClientLimits.closed[reason] += 1
    SlowClientLimits._logged[reason] += 1
    now = time.monotonic()
    if now - SlowClientLimits._logged_at >= LOG_EVERY_SECONDS:
        counts = ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in sorted(SlowClientLimits._logged.items()))
        log.warning("closed slow or surplus client connections: %s (logged at most once a minute)", counts)
        SlowClientLimits._logged_at = now
        SlowClientLimits._logged.clear()


def connection_cap(wanted: int) -> int:
    """``wanted`` connections, or as many as fit under the open-file limit (raised if it can be)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + RESERVED_FILES
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return wanted
    cap = max(MIN_CONNECTIONS, soft - RESERVED_FILES)
    log.warning(
        "the open-file limit (%d) leaves room for %d connections, not --max-connections %d; "
        "raise it (ulimit -n, or LimitNOFILE= in a systemd unit)",
        soft,
        cap,
        wanted,
    )
    return cap


def options(settings: Settings) -> dict[str, Any]:
    """uvicorn.run's keyword arguments for the limits on clients."""
    cap = connection_cap(int(settings.max_connections))
    protocol = type(
        "SlowClientLimits",
        (SlowClientLimits,),
        {
            "header_timeout": float(settings.header_timeout_seconds),
            "body_timeout": float(settings.body_timeout_seconds),
            "max_connections": cap,
        },
    )
    return {
        "http": protocol,
        "timeout_keep_alive": int(settings.keep_alive_seconds),
        "limit_concurrency": cap + 1,  # uvicorn counts the new connection: cap are served
    }
