"""First start: a one-time setup link, owner creation in the browser, and no default password."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx

from tests.conftest import StartServer
from tests.support.http import TLS
from tests.support.server import create_owner


def test_first_start_prints_a_one_time_link_that_creates_the_owner_and_signs_in(
    start_server: StartServer,
) -> None:
    server = start_server()
    link = server.setup_link()
    assert link is not None, "".join(server.output)
    token = parse_qs(urlsplit(link).query)["token"][0]
    assert len(token) >= 43
    with server.client() as client:
        page = client.get(link)
        assert page.status_code == 200
        assert "text/html" in page.headers["content-type"]
        created = client.post(
            "/setup", json={"token": token, "email": "Me@Example.com", "password": "a long enough password"}
        )
        assert created.status_code == 201, created.text
        assert created.json()["user"]["email"] == "me@example.com"
        assert client.get("/api/me").json()["email"] == "me@example.com"
        again = client.post(
            "/setup", json={"token": token, "email": "you@example.com", "password": "a long enough password"}
        )
        assert again.status_code == 403
        assert again.json()["error"]["code"] == "invalid_setup_token"
        assert client.get(link).status_code == 404
    with httpx.Client(verify=TLS, base_url=server.base_url) as fresh:
        login = fresh.post(
            "/api/login",
            json={"email": "me@example.com", "password": "a long enough password"},
            headers={"Origin": server.origin},
        )
        assert login.status_code == 200


def test_setup_refuses_a_wrong_token_and_a_weak_password(start_server: StartServer) -> None:
    server = start_server()
    link = server.setup_link()
    assert link is not None
    token = parse_qs(urlsplit(link).query)["token"][0]
    with server.client() as client:
        wrong = client.post(
            "/setup",
            json={"token": token[:-2] + "xx", "email": "a@example.com", "password": "a long enough password"},
        )
        assert wrong.status_code == 403
        weak = client.post("/setup", json={"token": token, "email": "a@example.com", "password": "short"})
        assert weak.status_code == 422
        assert weak.json()["error"]["field"] == "password"
        bad_email = client.post(
            "/setup", json={"token": token, "email": "not-an-email", "password": "a long enough password"}
        )
        assert bad_email.status_code == 422
        assert bad_email.json()["error"]["field"] == "email"
        # The refusals did not use the link up.
        assert (
            client.post(
                "/setup",
                json={"token": token, "email": "a@example.com", "password": "a long enough password"},
            ).status_code
            == 201
        )


def test_setup_needs_the_console_origin_and_json(start_server: StartServer) -> None:
    server = start_server()
    with httpx.Client(verify=TLS, base_url=server.base_url) as client:
        assert client.post("/setup", json={}, headers={"Origin": "http://evil.example"}).status_code == 403
        assert (
            client.post(
                "/setup",
                content=b"token=x",
                headers={"Origin": server.origin, "Content-Type": "application/x-www-form-urlencoded"},
            ).status_code
            == 415
        )


def test_no_setup_link_is_printed_once_an_owner_exists(start_server: StartServer, tmp_path: object) -> None:
    first = start_server()
    create_owner(first, "owner@example.com", "a long enough password")
    first.stop()
    from tests.support.server import LiveServer

    again = LiveServer(first.data_dir).start()
    try:
        assert again.setup_link() is None
        assert "No owner account" not in "".join(again.output)
    finally:
        again.stop()


def test_a_restart_without_an_owner_prints_a_new_link_and_retires_the_old_one(
    start_server: StartServer,
) -> None:
    from tests.support.server import LiveServer

    first = start_server()
    old = first.setup_link()
    first.stop()
    second = LiveServer(first.data_dir).start()
    try:
        new = second.setup_link()
        assert new is not None
        assert new != old
        old_path = "/setup?" + urlsplit(old or "").query
        with second.client() as client:
            assert client.get(old_path).status_code == 404
            assert client.get(new).status_code == 200
    finally:
        second.stop()
