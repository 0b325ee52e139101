"""Every registered console route is protected in PRODUCT.md's order: 401, 403, 415, 413, then
the role's 403 ``forbidden`` (``test_route_roles.py`` calls every route as each role and key).

The routes are read from the application itself, so a route added later is checked too.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.console.route_lists import BIG, CHANGING, JSON, ROUTES, SIGNED, UPLOADS, ids
from tests.support.http import TLS
from tests.support.routes import Route
from tests.support.server import LiveServer


def test_the_matrix_sees_the_console_routes() -> None:
    names = set(ids(ROUTES))
    for expected in (
        "POST /api/login",
        "POST /api/logout",
        "GET /api/me",
        "GET /api/sites",
        "POST /api/sites",
        "PATCH /api/sites/{site_id}",
        "POST /api/sites/{site_id}/retry",
        "GET /api/health",
    ):
        assert expected in names


def _origin_variants(origin: str) -> dict[str, dict[str, str]]:
    host = origin.removeprefix("http://")
    return {
        "missing": {},
        "null": {"Origin": "null"},
        "different": {"Origin": "http://evil.example"},
        "prefix-matching": {"Origin": origin + ".evil.example"},
        "origin-is-a-prefix": {"Origin": origin[:-1]},
        "differently-cased": {"Origin": "HTTP://" + host.upper()},
        "with-trailing-slash": {"Origin": origin + "/"},
    }


@pytest.fixture
def anonymous(console_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(verify=TLS, base_url=console_server.base_url, timeout=30) as client:
        yield client


@pytest.mark.parametrize("route", SIGNED, ids=ids(SIGNED))
def test_a_request_without_a_session_gets_401(
    route: Route, anonymous: httpx.Client, console_server: LiveServer
) -> None:
    # Even with a good Origin, JSON type and small body, no session means 401 first.
    headers = {"Origin": console_server.origin, "Content-Type": "application/json"}
    response = anonymous.request(route.method, route.path, headers=headers, content=b"{}")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_signed_in"


@pytest.mark.parametrize("route", SIGNED, ids=ids(SIGNED))
def test_a_forged_or_expired_session_cookie_gets_401(
    route: Route, anonymous: httpx.Client, console_server: LiveServer
) -> None:
    headers = {
        "Origin": console_server.origin,
        "Content-Type": "application/json",
        "Cookie": "sightline_session=" + "A" * 43,
    }
    response = anonymous.request(route.method, route.path, headers=headers, content=b"{}")
    assert response.status_code == 401


@pytest.mark.parametrize("route", CHANGING, ids=ids(CHANGING))
def test_a_state_changing_request_with_a_wrong_origin_gets_403(
    route: Route, owner: httpx.Client, console_server: LiveServer
) -> None:
    for name, origin in _origin_variants(console_server.origin).items():
        headers = {"Content-Type": "application/json", **origin}
        with httpx.Client(
            verify=TLS, base_url=console_server.base_url, cookies=owner.cookies, timeout=30
        ) as client:
            response = client.request(route.method, route.path, headers=headers, content=b"{}")
        assert response.status_code == 403, f"{name} Origin was let through"
        assert response.json()["error"]["code"] == "bad_origin"
    still_signed_in = owner.get("/api/me")
    assert still_signed_in.status_code == 200


@pytest.mark.parametrize("route", JSON, ids=ids(JSON))
def test_a_json_method_without_the_json_content_type_gets_415(
    route: Route, owner: httpx.Client, console_server: LiveServer
) -> None:
    for content_type in (
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "application/jsonp",
        "application/json-patch+json",
    ):
        headers = {} if content_type is None else {"Content-Type": content_type}
        with httpx.Client(
            verify=TLS,
            base_url=console_server.base_url,
            cookies=owner.cookies,
            headers={"Origin": console_server.origin},
            timeout=30,
        ) as client:
            response = client.request(route.method, route.path, headers=headers, content=b"{}")
        assert response.status_code == 415, f"Content-Type {content_type} was let through"
        assert response.json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.parametrize("route", JSON, ids=ids(JSON))
def test_a_body_over_8_kib_gets_413_whether_declared_or_chunked(
    route: Route, owner: httpx.Client, console_server: LiveServer
) -> None:
    headers = {"Content-Type": "application/json; charset=utf-8"}
    declared = owner.request(route.method, route.path, headers=headers, content=BIG)
    assert declared.status_code == 413
    assert declared.json()["error"]["code"] == "body_too_large"

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(BIG), 1000):
            yield BIG[start : start + 1000]

    chunked = owner.request(route.method, route.path, headers=headers, content=chunks())
    assert chunked.request.headers.get("transfer-encoding") == "chunked"
    assert chunked.status_code == 413


@pytest.mark.parametrize("route", JSON, ids=ids(JSON))
def test_a_body_of_exactly_8_kib_is_not_refused_for_its_size(route: Route, owner: httpx.Client) -> None:
    body = b'{"x": "' + b"a" * (8 * 1024 - 10) + b'"}'
    assert len(body) == 8 * 1024 - 1
    response = owner.request(
        route.method, route.path, headers={"Content-Type": "application/json"}, content=body
    )
    assert response.status_code not in {401, 403, 413, 415}


def test_the_matrix_sees_the_upload_route() -> None:
    assert [str(r) for r in UPLOADS] == ["POST /api/sites/{site_id}/imports"]


@pytest.mark.parametrize("route", UPLOADS, ids=ids(UPLOADS))
def test_an_upload_route_takes_a_file_not_json_in_the_same_order_of_checks(
    route: Route, anonymous: httpx.Client, owner: httpx.Client, console_server: LiveServer
) -> None:
    file = {"Origin": console_server.origin, "Content-Type": "text/csv"}
    assert anonymous.request(route.method, route.path, headers=file, content=b"x").status_code == 401
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, cookies=owner.cookies, timeout=30
    ) as client:
        no_origin = {"Content-Type": "text/csv"}
        assert client.request(route.method, route.path, headers=no_origin, content=b"x").status_code == 403
        for content_type in ("application/json", "text/plain", "multipart/form-data", None):
            headers = {"Origin": console_server.origin} | (
                {"Content-Type": content_type} if content_type else {}
            )
            refused = client.request(route.method, route.path, headers=headers, content=b"{}")
            assert refused.status_code == 415, content_type
            assert refused.json()["error"]["code"] == "unsupported_media_type"
        # A file is no JSON body: more than 8 KiB passes the guard (the site 1 may not exist: 404).
        big = client.request(route.method, route.path, headers=file, content=b"a" * 20_000)
        assert big.status_code in {404, 422}, big.text


def test_the_checks_come_in_order_401_then_403_then_415_then_413(
    anonymous: httpx.Client, owner: httpx.Client, console_server: LiveServer
) -> None:
    bad_everything = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    assert anonymous.post("/api/sites", headers=bad_everything, content=BIG).status_code == 401
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, cookies=owner.cookies, timeout=30
    ) as client:
        assert client.post("/api/sites", headers=bad_everything, content=BIG).status_code == 403
        good_origin = {**bad_everything, "Origin": console_server.origin}
        assert client.post("/api/sites", headers=good_origin, content=BIG).status_code == 415
        json_type = {**good_origin, "Content-Type": "application/json"}
        assert client.post("/api/sites", headers=json_type, content=BIG).status_code == 413
        assert client.post("/api/sites", headers=json_type, content=b"{nope").status_code == 400
        invalid = client.post("/api/sites", headers=json_type, content=b'{"name": "x", "domain": "a b"}')
        assert invalid.status_code == 422
        assert invalid.json()["error"]["field"] == "domain"


def test_an_unknown_api_path_is_401_without_a_session_and_404_with_one(
    anonymous: httpx.Client, owner: httpx.Client
) -> None:
    assert anonymous.get("/api/nothing-here").status_code == 401
    response = owner.get("/api/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_wrong_method_on_a_known_path_is_405_in_the_error_shape(owner: httpx.Client) -> None:
    response = owner.put("/api/me", json={})
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
