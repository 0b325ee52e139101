"""An unexpected error is a 500 in the error shape, and the keep-alive connection that carried it
goes on: the next request on it is answered (uvicorn closes a connection whose application
raised, so the error must end with its answer)."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI

from sightline.app import create_app
from sightline.settings import load
from tests.support.ports import free_port


@pytest.fixture
def failing_server(tmp_path: Path) -> Iterator[int]:
    app: FastAPI = create_app(load({"data_dir": str(tmp_path)}, environ={}))

    @app.get("/broken")
    def broken() -> None:
        raise RuntimeError("a bug")

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, http="httptools", lifespan="off", log_level="critical"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield port
    server.should_exit = True
    thread.join(30)


def test_an_unexpected_error_is_a_500_and_the_connection_answers_the_next_request(
    failing_server: int,
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", failing_server, timeout=10)
    try:
        for _ in range(3):
            connection.request("GET", "/broken")
            answer = connection.getresponse()
            body = json.loads(answer.read())
            assert answer.status == 500
            assert body["error"]["code"] == "internal_error"
            assert "a bug" not in json.dumps(body)
            connection.request("GET", "/healthz")  # on the same connection (http.client raises if reset)
            healthy = connection.getresponse()
            assert healthy.status == 200
            assert healthy.read()
    finally:
        connection.close()
