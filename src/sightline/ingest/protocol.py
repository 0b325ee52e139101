"""The wire between the server and its writer process: length-prefixed msgpack frames over pipes.

Server -> writer: one ``Hello`` (the database URL travels here, never on a command line that
``ps`` shows), then one ``Submit`` per batch: the request body exactly as the server validated
it, with what the server already worked out (site, user agent fields, arrival time, and the
client's address for the writer's place lookup).
Writer -> server: one ``Ready`` once its database connection is set up, then one ``Outcome`` per
group commit, naming every submitted batch it settles.
"""

from __future__ import annotations

import struct

import msgspec
from msgspec import Struct

HEAD = struct.Struct("<I")  # the frame's payload length
MAX_FRAME = 1 << 24  # far above any frame either side writes (a body is at most 64 KiB)

# How a batch settled, per Outcome.codes.
STORED = 0  # stored by this group
DUPLICATE = 1  # its batch id was stored before: answered 202 again, nothing stored
REFUSED = 2  # the database refused this batch's data: nothing of it stored
FAILED = 3  # the group's transaction failed: nothing of the group stored


class Hello(Struct, array_like=True, gc=False):
    database_url: str
    log_level: str
    geoip_database: str | None = None  # the operator's MaxMind-format file (--geoip-database)
    log_format: str = "text"


class Ready(Struct, array_like=True, gc=False, tag=0):
    pid: int


class Submit(Struct, array_like=True, gc=False):
    seq: int  # the server's number for this batch, echoed by the Outcome
    site_id: int
    site_host: str  # the site's domain host: a referrer on it is no source
    browser: str | None
    os: str | None
    device_type: str | None
    received_us: int  # arrival, epoch microseconds
    body: bytes  # the request body, already validated by the server
    # The client's address, for the writer's country lookup only: it travels in this pipe and
    # is never stored, logged or kept once the batch's place is known.
    address: str | None = None
    # Cookieless sites (``sightline.visitors.codes``): the writer derives visitor and visit codes
    # from a daily salt, the site, the address and this user agent (sent only for them).
    cookieless: bool = False
    user_agent: str | None = None
    language: str | None = None  # the primary subtag of the request's Accept-Language (a fallback)


class Outcome(Struct, array_like=True, gc=False, tag=1):
    seqs: list[int]
    codes: list[int]
    commit_ms: float


class ProtocolError(Exception):
    """A frame that is not what the other side writes: the pipe is out of step."""


def frame(encoder: msgspec.msgpack.Encoder, message: Struct) -> bytes:
    payload = encoder.encode(message)
    return HEAD.pack(len(payload)) + payload


class Frames:
    """Reassembles frames from pipe reads of any size."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """The payload of every whole frame that ``data`` completes, in order."""
        buffer = self._buffer
        buffer += data
        payloads: list[bytes] = []
        position, size = 0, len(buffer)
        while size - position >= HEAD.size:
            (length,) = HEAD.unpack_from(buffer, position)
            if length > MAX_FRAME:
                raise ProtocolError(f"a frame of {length} bytes")
            end = position + HEAD.size + length
            if end > size:
                break
            payloads.append(bytes(buffer[position + HEAD.size : end]))
            position = end
        del buffer[:position]
        return payloads

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back."""
        return len(self._buffer)
