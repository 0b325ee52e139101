"""Signing in and out: generic failures, throttling, server-side sessions and cookie flags."""

from __future__ import annotations

import statistics
import time

import httpx
import pytest

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer
from tests.support.http import TLS
from tests.support.server import LiveServer, create_owner


def _login(client: httpx.Client, email: str, password: str) -> httpx.Response:
    return client.post("/api/login", json={"email": email, "password": password})


def test_a_wrong_password_and_an_unknown_user_get_the_same_status_and_message(
    console_server: LiveServer,
) -> None:
    with console_server.client() as client:
        wrong_password = _login(client, OWNER_EMAIL, "not the password at all")
        unknown_user = _login(client, "nobody-here@example.com", "not the password at all")
    assert wrong_password.status_code == unknown_user.status_code == 401
    assert wrong_password.json() == unknown_user.json()
    assert wrong_password.json()["error"]["code"] == "invalid_credentials"
    assert "sightline_session" not in wrong_password.cookies


def test_an_unknown_user_takes_as_long_to_refuse_as_a_wrong_password(start_server: StartServer) -> None:
    server = start_server(
        env={"SIGHTLINE_LOGIN_MAX_FAILURES": "100", "SIGHTLINE_LOGIN_MAX_FAILURES_PER_IP": "100"}
    )
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    timings: dict[str, list[float]] = {"known": [], "unknown": []}
    with server.client() as client:
        for _ in range(7):
            for kind, email in (("known", OWNER_EMAIL), ("unknown", "ghost@example.com")):
                started = time.perf_counter()
                assert _login(client, email, "wrong password!").status_code == 401
                timings[kind].append(time.perf_counter() - started)
    # Skipping the password hash would answer an unknown user some 30 times sooner; medians of
    # interleaved tries keep a loaded machine's pauses from tipping the ratio either way.
    known, unknown = statistics.median(timings["known"]), statistics.median(timings["unknown"])
    assert 1 / 3 < unknown / known < 3, (known, unknown)


def test_the_right_password_signs_in_with_a_hardened_cookie(console_server: LiveServer) -> None:
    with console_server.client() as client:
        response = _login(client, OWNER_EMAIL.upper(), OWNER_PASSWORD)
        assert response.status_code == 200
        assert response.json()["user"]["email"] == OWNER_EMAIL
        cookie = response.headers["set-cookie"]
        assert cookie.startswith("sightline_session=")
        flags = {part.strip().lower() for part in cookie.split(";")[1:]}
        assert "httponly" in flags
        assert "samesite=lax" in flags
        assert "path=/" in flags
        assert "secure" not in flags  # the console origin is plain http here
        token = cookie.split(";")[0].split("=", 1)[1]
        assert len(token) >= 43  # 256 random bits, URL-safe base64
        assert client.get("/api/me").status_code == 200


def test_the_cookie_is_secure_when_the_public_url_is_https(start_server: StartServer) -> None:
    server = start_server(env={"SIGHTLINE_PUBLIC_URL": "https://analytics.example.com"})
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    with httpx.Client(
        verify=TLS, base_url=server.base_url, headers={"Origin": "https://analytics.example.com"}
    ) as client:
        response = _login(client, OWNER_EMAIL, OWNER_PASSWORD)
        assert response.status_code == 200
        assert "secure" in response.headers["set-cookie"].lower()
        refused = client.post(
            "/api/login",
            json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD},
            headers={"Origin": server.origin},
        )
        assert refused.status_code == 403


def test_logout_ends_the_session_on_the_server_so_a_copied_cookie_stops_working(
    console_server: LiveServer,
) -> None:
    with console_server.client() as client:
        _login(client, OWNER_EMAIL, OWNER_PASSWORD)
        copied = dict(client.cookies)
        response = client.post("/api/logout", headers={"Content-Type": "application/json"})
        assert response.status_code == 204
        assert (
            'sightline_session=""' in response.headers["set-cookie"]
            or "Max-Age=0" in response.headers["set-cookie"]
        )
    with httpx.Client(verify=TLS, base_url=console_server.base_url, cookies=copied) as thief:
        assert thief.get("/api/me").status_code == 401


def test_each_login_issues_a_new_token_and_retires_the_one_it_replaces(console_server: LiveServer) -> None:
    with console_server.client() as client:
        _login(client, OWNER_EMAIL, OWNER_PASSWORD)
        first = dict(client.cookies)
        _login(client, OWNER_EMAIL, OWNER_PASSWORD)
        second = dict(client.cookies)
    assert first != second
    with httpx.Client(verify=TLS, base_url=console_server.base_url, cookies=first) as old:
        assert old.get("/api/me").status_code == 401
    with httpx.Client(verify=TLS, base_url=console_server.base_url, cookies=second) as new:
        assert new.get("/api/me").status_code == 200


def test_repeated_failures_for_one_account_are_throttled_with_retry_after(start_server: StartServer) -> None:
    server = start_server(env={"SIGHTLINE_LOGIN_MAX_FAILURES": "3"})
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    with server.client() as client:
        for _ in range(3):
            assert _login(client, OWNER_EMAIL, "wrong password!").status_code == 401
        throttled = _login(client, OWNER_EMAIL, OWNER_PASSWORD)
        assert throttled.status_code == 429
        assert throttled.json()["error"]["code"] == "too_many_attempts"
        assert 1 <= int(throttled.headers["Retry-After"]) <= 15 * 60
        # Another account from the same address is not locked by this one's failures.
        assert _login(client, "other@example.com", "wrong password!").status_code == 401


def test_repeated_failures_from_one_address_are_throttled_across_accounts(start_server: StartServer) -> None:
    server = start_server(env={"SIGHTLINE_LOGIN_MAX_FAILURES_PER_IP": "4"})
    with server.client() as client:
        for n in range(4):
            assert _login(client, f"guess{n}@example.com", "wrong password!").status_code == 401
        throttled = _login(client, "guess-new@example.com", "wrong password!")
    assert throttled.status_code == 429
    assert int(throttled.headers["Retry-After"]) >= 1


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (b"{", 400, None),
        (b"[]", 422, "body"),
        (b'{"email": "a@example.com"}', 422, "password"),
        (b'{"email": 5, "password": "x"}', 422, "email"),
        (b'{"email": "a@example.com", "password": "x", "remember": true}', 422, "remember"),
        (b'{"email": "a\\ud800@example.com", "password": "x"}', 422, "email"),
    ],
)
def test_a_malformed_login_body_gets_a_clear_error(
    console_server: LiveServer, body: bytes, status: int, field: str | None
) -> None:
    with console_server.client() as client:
        response = client.post("/api/login", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status
    assert response.json()["error"].get("field") == field
