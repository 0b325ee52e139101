"""The recordings decoder's worker process (``decoder.ChunkDecoder`` starts and feeds it): what it
runs, in a module of its own so that the spawned process imports no more than that (the server's
side of the decoder needs asyncio, which cost the worker's start about 40 ms of CPU).

May import: ``sightline.recordings.chunks``, ``sightline.errors``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace

from sightline.errors import ApiError
from sightline.recordings import chunks

NICENESS = 10  # about a tenth of the CPU the server and the writer get when both want it
RECURSION_SLACK = 40  # the worker's own frames below ``chunks.decode``
WATCH_SECONDS = 0.5


@dataclass(frozen=True)
class Refusal:
    """A chunk the worker refused: what the client is told."""

    status: int
    code: str
    message: str
    field: str | None


def prepare_worker(server: int) -> None:
    """In the worker: leave the CPU to the server and the writer first; bound JSON nesting; end
    with the server (even a SIGKILLed one); leave SIGINT and SIGTERM to the server, which decides."""
    os.nice(NICENESS)
    sys.setrecursionlimit(chunks.MAX_DEPTH + RECURSION_SLACK)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(server,), name="end-with-server", daemon=True).start()


def _end_with(server: int) -> None:
    while os.getppid() == server:
        time.sleep(WATCH_SECONDS)
    os._exit(0)


def decode_in_worker(body: bytes) -> chunks.Chunk | Refusal:
    """``chunks.decode`` in the worker; a gzip body is not sent back (the server still has it)."""
    try:
        chunk = chunks.decode(body)
    except ApiError as exc:
        return Refusal(exc.status, exc.code, exc.message, exc.field)
    except MemoryError:
        return Refusal(413, "chunk_too_large", "The chunk is too large to be checked.", None)
    return replace(chunk, stored=b"") if chunk.stored is body else chunk
