"""Every registered console route is protected in PRODUCT.md's order: 401, 403, 415, 413, then
the role's 403 ``forbidden``; and every route is called as each role (owner, admin, viewer, a
viewer given one site, an API key).

The routes are read from the application itself, so a route added later is checked too.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sightline.console.guard import JSON_METHODS, OPEN_ROUTES, STATE_CHANGING, UPLOAD_ROUTES
from sightline.console.roles import ADMIN_READS, EVERYONE_MAY, is_key_route
from tests.conftest import sign_in
from tests.support.http import TLS
from tests.support.routes import Route, console_routes
from tests.support.server import LiveServer
from tests.support.team import MEMBER_PASSWORD, token_of

ROUTES = console_routes(Path(tempfile.mkdtemp(prefix="sightline-routes-")))
SIGNED = [r for r in ROUTES if (r.method, r.template) not in OPEN_ROUTES]
CHANGING = [r for r in ROUTES if r.method in STATE_CHANGING]
JSON = [r for r in ROUTES if r.method in JSON_METHODS and (r.method, r.template) not in UPLOAD_ROUTES]
UPLOADS = [r for r in ROUTES if (r.method, r.template) in UPLOAD_ROUTES]
BIG = b'{"x": "' + b"a" * (8 * 1024) + b'"}'


def ids(routes: list[Route]) -> list[str]:
    return [str(r) for r in routes]


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


# Roles: every route, for every role. Path ids are filled with an id no object has, so that no
# call touches the owner (id 1) or anything else that exists.
UNUSED_ID = "987654321"
KEY_ROUTES = [r for r in ROUTES if is_key_route(r.method, r.template)]
MEMBER_ROUTES = [r for r in SIGNED if (r.method, r.template) != ("POST", "/api/logout")]


def _path(route: Route, value: str = UNUSED_ID) -> str:
    return re.sub(r"\{[^}]+\}", value, route.template)


def _call(client: httpx.Client, route: Route, path: str | None = None) -> httpx.Response:
    if route in UPLOADS:  # a file, not JSON
        headers = {"Content-Type": "text/csv"}
        return client.request(route.method, path or _path(route), headers=headers, content=b"date\n")
    headers = {"Content-Type": "application/json"}
    return client.request(route.method, path or _path(route), headers=headers, content=b"{}")


@pytest.fixture(scope="module")
def members(console_server: LiveServer) -> Iterator[dict[str, Any]]:
    """An admin and two viewers (one given one site) of the owner's team, signed in, and an API key."""
    made: dict[str, Any] = {"owner": sign_in(console_server)}
    site = made["owner"].post("/api/sites", json={"name": "Matrix", "domain": "matrix.example.com"}).json()
    for role, site_ids in (("admin", None), ("viewer", None), ("scoped", [site["id"]])):
        invitation = (
            made["owner"]
            .post(
                "/api/invitations",
                json={"email": f"{role}@matrix.example.com", "role": "admin" if role == "admin" else "viewer"}
                | ({"site_ids": site_ids} if site_ids else {}),
            )
            .json()
        )
        client = console_server.client()
        accepted = client.post(
            "/api/invitations/accept",
            json={"token": token_of(invitation["url"]), "password": MEMBER_PASSWORD},
        )
        assert accepted.status_code == 201, accepted.text
        made[role] = client
    key = made["owner"].post("/api/keys", json={"name": "matrix"}).json()["key"]
    made["key"] = httpx.Client(
        verify=TLS, base_url=console_server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    made["site"] = site
    yield made
    for name, client in made.items():
        if name != "site":
            client.close()


def test_an_admin_may_call_every_route(members: dict[str, Any]) -> None:
    for route in MEMBER_ROUTES:
        response = _call(members["admin"], route)
        assert response.status_code not in {401, 403}, f"{route}: {response.status_code} {response.text}"


def test_a_viewer_may_read_but_every_change_is_403_forbidden(members: dict[str, Any]) -> None:
    for route in MEMBER_ROUTES:
        response = _call(members["viewer"], route)
        if (route.method, route.template) in EVERYONE_MAY:  # their own choice (e-mails)
            assert response.status_code not in {401, 403}, f"{route}: {response.status_code} {response.text}"
        elif route.method in STATE_CHANGING or (route.method, route.template) in ADMIN_READS:
            assert response.status_code == 403, f"{route} let a viewer through: {response.status_code}"
            assert response.json()["error"]["code"] == "forbidden"
        else:
            assert response.status_code not in {401, 403}, f"{route}: {response.status_code} {response.text}"
    assert members["viewer"].get("/api/me").json()["role"] == "viewer"


def test_forbidden_comes_after_the_origin_type_and_size_checks(
    members: dict[str, Any], console_server: LiveServer
) -> None:
    viewer = members["viewer"]
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, cookies=viewer.cookies, timeout=30
    ) as no_origin:
        assert no_origin.post("/api/sites", json={}).status_code == 403
        assert no_origin.post("/api/sites", json={}).json()["error"]["code"] == "bad_origin"
    assert viewer.post("/api/sites", content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 415
    big = viewer.post("/api/sites", content=BIG, headers={"Content-Type": "application/json"})
    assert big.status_code == 413
    assert viewer.post("/api/sites", json={}).json()["error"]["code"] == "forbidden"


def test_a_viewer_given_one_site_finds_no_other_site_on_any_route(members: dict[str, Any]) -> None:
    site_routes = [r for r in MEMBER_ROUTES if "{site_id}" in r.template and r.method == "GET"]
    assert site_routes
    for route in site_routes:
        if (route.method, route.template) in ADMIN_READS:
            continue
        response = _call(members["scoped"], route, route.template.replace("{site_id}", UNUSED_ID))
        assert response.status_code == 404, f"{route}: {response.status_code}"
    other = members["owner"].post("/api/sites", json={"name": "Other", "domain": "other.matrix.example.com"})
    listed = [s["id"] for s in members["scoped"].get("/api/sites").json()["sites"]]
    assert listed == [members["site"]["id"]]
    assert other.json()["id"] not in listed


def test_an_api_key_reads_the_report_routes_and_nothing_else(members: dict[str, Any]) -> None:
    assert KEY_ROUTES
    site_id = str(members["site"]["id"])
    for route in SIGNED:
        response = _call(members["key"], route, _path(route, site_id))
        if route in KEY_ROUTES:
            assert response.status_code not in {401, 403}, f"{route}: {response.status_code} {response.text}"
        else:
            assert response.status_code == 401, f"{route} accepted an API key: {response.status_code}"


def test_a_viewer_may_sign_out(console_server: LiveServer, members: dict[str, Any]) -> None:
    invitation = (
        members["owner"]
        .post("/api/invitations", json={"email": "leaving@matrix.example.com", "role": "viewer"})
        .json()
    )
    with console_server.client() as client:
        client.post(
            "/api/invitations/accept",
            json={"token": token_of(invitation["url"]), "password": MEMBER_PASSWORD},
        )
        assert client.post("/api/logout", json={}).status_code == 204
        assert client.get("/api/me").status_code == 401
