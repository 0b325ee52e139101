"""Fuzzing every console route from its OpenAPI document: no input may produce a server error."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from sightline.app import create_app
from sightline.settings import load
from tests.conftest import sign_in
from tests.support.server import LiveServer, create_owner


def _document() -> dict[str, object]:
    app = create_app(load({"data_dir": tempfile.mkdtemp(prefix="sightline-openapi-")}, environ={}))
    document: dict[str, object] = app.openapi()
    return document


# Logging out would end the fuzzer's own session; the route matrix and login tests cover it.
schema = schemathesis.openapi.from_dict(_document()).exclude(path="/api/logout")


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    server = LiveServer(
        tmp_path_factory.mktemp("fuzz") / "data",
        env={
            "SIGHTLINE_CHECK_TIMEOUT_SECONDS": "1",
            "SIGHTLINE_LOGIN_MAX_FAILURES": "1000000",
            "SIGHTLINE_LOGIN_MAX_FAILURES_PER_IP": "1000000",
        },
    ).start()
    create_owner(server, "owner@example.com", "correct horse battery staple")
    client = sign_in(server)
    client.post("/api/sites", json={"name": "Fuzzed", "domain": "fuzz.example.com"})
    headers = {"Origin": server.origin, "Cookie": f"sightline_session={client.cookies['sightline_session']}"}
    client.close()
    yield server, headers
    server.stop()


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_console_route_answers_a_server_error(
    case: schemathesis.Case[Any], fuzz_target: tuple[LiveServer, dict[str, str]]
) -> None:
    server, headers = fuzz_target
    response = case.call(base_url=server.base_url, headers=headers, timeout=30)
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}"
    if response.status_code >= 400 and case.formatted_path.startswith("/api/"):
        assert response.headers["content-type"][0] == "application/json", case.as_curl_command(headers)
        error = response.json()["error"]
        assert isinstance(error["code"], str)
        assert isinstance(error["message"], str)
