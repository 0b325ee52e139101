"""How ``sightline serve`` writes answers (a response's head goes out with its body, in one write),
and how often uvicorn's main loop wakes."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import uvicorn

from sightline.serving import OneWrite, Server


class Recorded:
    """A transport that records what is written to it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 8000) if name == "sockname" else default


def test_a_response_head_and_its_body_go_out_in_one_write() -> None:
    async def answer() -> list[bytes]:
        transport = Recorded()
        one = OneWrite(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 2\r\n\r\n")
        one.write(b"{}")
        one.write(b"more")
        await asyncio.sleep(0)
        return transport.writes

    assert asyncio.run(answer()) == [b"HTTP/1.1 202 Accepted\r\ncontent-length: 2\r\n\r\n{}", b"more"]


def test_a_head_without_a_body_in_the_same_loop_turn_is_not_held_longer() -> None:
    async def answer() -> tuple[list[bytes], list[bytes]]:
        transport = Recorded()
        one = OneWrite(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        held = list(transport.writes)
        await asyncio.sleep(0)
        return held, transport.writes

    held, written = asyncio.run(answer())
    assert held == []
    assert written == [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"]


def test_closing_sends_what_is_held_first() -> None:
    async def answer() -> tuple[Recorded, OneWrite]:
        transport = Recorded()
        one = OneWrite(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 500 Internal Server Error\r\nconnection: close\r\n\r\n")
        one.close()
        await asyncio.sleep(0)
        return transport, one

    transport, one = asyncio.run(answer())
    assert transport.writes == [b"HTTP/1.1 500 Internal Server Error\r\nconnection: close\r\n\r\n"]
    assert transport.closed
    assert one.is_closing()
    assert one.get_extra_info("sockname") == ("127.0.0.1", 8000)  # the rest is the transport's


def test_a_head_held_for_a_client_that_left_is_dropped_without_an_error() -> None:
    async def answer() -> Recorded:
        transport = Recorded()
        one = OneWrite(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        transport.closed = True  # the connection was lost before the loop's next turn
        await asyncio.sleep(0)
        return transport

    assert asyncio.run(answer()).writes == []


def test_the_main_loop_turns_once_a_second_and_a_stop_request_wakes_it_at_once() -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise AssertionError("no request comes")

    async def run() -> tuple[int, float]:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="off")
        server = Server(config)
        turns = 0
        renew = server.on_tick

        async def counted(counter: int) -> bool:
            nonlocal turns
            turns += 1
            return await renew(counter)

        server.on_tick = counted  # type: ignore[method-assign]
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        await asyncio.sleep(2.5)
        seen = turns
        asked = time.monotonic()
        threading.Thread(target=setattr, args=(server, "should_exit", True)).start()  # as a signal would
        await serving
        return seen, time.monotonic() - asked

    turns, stopping = asyncio.run(run())
    assert turns <= 4  # uvicorn's own loop: 26 in 2.5 s
    assert stopping < 0.5  # the stop did not wait for the next turn
