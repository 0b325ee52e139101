"""Fuzzing every console route from its OpenAPI document: no input may produce a server error.

Each route is a test of its own, named by its operation ("GET /api/sites") as Schemathesis names it.
Its cases are built as its test runs, as Schemathesis's lazy schemas do (``from_fixture``, which
pytest 9 breaks): built while collecting, every route's took 4.5 s of CPU in each xdist worker,
though one worker runs them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from http.cookiejar import DefaultCookiePolicy
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.core.result import Err
from schemathesis.pytest.lazy import get_all_tests

from tests.conftest import sign_in
from tests.support.routes import document_app
from tests.support.server import LiveServer, create_owner

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# Logging out would end the fuzzer's own session; the route matrix and login tests cover it.
LEFT_OUT = "/api/logout"


def _document() -> dict[str, Any]:
    document: dict[str, Any] = document_app("sightline-openapi-").openapi()
    return document


DOCUMENT = _document()
# The operations in the document's order, as Schemathesis labels them.
OPERATIONS = [
    f"{method.upper()} {path}"
    for path, item in DOCUMENT["paths"].items()
    if path != LEFT_OUT
    for method in item
    if method in METHODS
]


@pytest.fixture(scope="module")
def schema() -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(DOCUMENT).exclude(path=LEFT_OUT)


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


@cache
def _session() -> requests.Session:
    """One HTTP session for every case, its connection kept open: a session and a connection per
    case cost this process and the server about a tenth of the module's CPU. It keeps no cookie an
    answer sets (a case that signs in or sets up an owner changes nothing for the next), so each
    case sends only its own headers, as with a session of its own."""
    session = requests.Session()
    session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    return session


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def _no_server_error(case: schemathesis.Case[Any], fuzz_target: tuple[LiveServer, dict[str, str]]) -> None:
    server, headers = fuzz_target
    response = case.call(base_url=server.base_url, session=_session(), headers=headers, timeout=30)
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}"
    if response.status_code >= 400 and case.formatted_path.startswith("/api/"):
        assert response.headers["content-type"][0] == "application/json", case.as_curl_command(headers)
        error = response.json()["error"]
        assert isinstance(error["code"], str)
        assert isinstance(error["message"], str)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_no_console_route_answers_a_server_error(
    operation: str, schema: schemathesis.BaseSchema, fuzz_target: tuple[LiveServer, dict[str, str]]
) -> None:
    method, path = operation.split(" ", 1)
    route = schema.include(method=method, path=path)
    [built] = get_all_tests(schema=route, test_func=_no_server_error, settings=None, given_kwargs=None)
    if isinstance(built, Err):
        raise built.err()
    found, test = built.ok()
    assert found.label == operation
    test(fuzz_target=fuzz_target)
