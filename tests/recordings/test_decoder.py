"""The decoder process: chunks are decoded there, a queue beyond its bound is answered 503, and a
worker that dies is replaced (the chunks it held answered 503, the next ones decoded)."""

from __future__ import annotations

import asyncio
import gzip
import os
import signal

import orjson
import pytest

from sightline.errors import ApiError
from sightline.recordings.decoder import ChunkDecoder

T = 1_700_000_000_000


def body(session: str = "s") -> bytes:
    document = {"session_id": session, "visitor_id": "v", "events": [{"type": 2, "timestamp": T}]}
    return gzip.compress(orjson.dumps(document))


async def decoded_session(decoder: ChunkDecoder, data: bytes) -> str:
    return (await decoder.decode(data)).session_id


async def first_refusal(decoder: ChunkDecoder) -> ApiError:
    """Decode until the pool notices its worker is gone."""
    for _ in range(100):
        try:
            await decoder.decode(body())
        except ApiError as exc:
            return exc
        await asyncio.sleep(0.1)
    raise AssertionError("the dead worker was never noticed")


def test_chunks_are_decoded_in_another_process_and_refusals_come_back_as_errors() -> None:
    async def run() -> None:
        decoder = ChunkDecoder()
        async with decoder.running():
            await decoder.ready()
            assert decoder.pid is not None
            assert decoder.pid != os.getpid()
            chunk = await decoder.decode(body("visit-1"))
            assert (chunk.session_id, chunk.snapshot) == ("visit-1", True)
            assert chunk.stored == body("visit-1")  # the server's own bytes, not a copy sent back
            with pytest.raises(ApiError) as refused:
                await decoder.decode(b"\x1f\x8bnot gzip")
            assert (refused.value.status, refused.value.code) == (400, "malformed_gzip")

    asyncio.run(run())


def test_chunks_beyond_the_waiting_bound_are_answered_503_with_retry_after() -> None:
    async def run() -> None:
        decoder = ChunkDecoder(waiting=2)
        async with decoder.running():
            await decoder.ready()
            results = await asyncio.gather(
                *(decoded_session(decoder, body(f"s{n}")) for n in range(5)), return_exceptions=True
            )
        busy = [r for r in results if isinstance(r, ApiError)]
        assert [r for r in results if isinstance(r, str)] == ["s0", "s1"]
        assert {(e.status, e.code, e.headers["Retry-After"]) for e in busy} == {(503, "recordings_busy", "2")}
        assert decoder.busy == 3

    asyncio.run(run())


def test_a_worker_that_dies_is_replaced_and_decoding_goes_on() -> None:
    async def run() -> None:
        decoder = ChunkDecoder()
        async with decoder.running():
            await decoder.ready()
            first = decoder.pid
            assert first is not None
            os.kill(first, signal.SIGKILL)
            lost = await first_refusal(decoder)
            assert (lost.status, lost.code) == (503, "recordings_unavailable")
            assert decoder.restarts == 1
            assert await decoded_session(decoder, body("after")) == "after"
            await decoder.ready()
            assert decoder.pid not in (None, first)

    asyncio.run(run())
