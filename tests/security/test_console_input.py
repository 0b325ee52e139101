"""Console input the attack pass sent: bodies that are not JSON, and cookies of other sites."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest

from sightline.app import create_app
from sightline.console.guard import session_token
from sightline.settings import load
from tests.support.http import TLS

ORIGIN = "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    "body", [b'{"email": "\xff\xfe", "password": "x"}', b'{"email":' + b"[" * 3000, b"\xc3\x28"]
)
def test_a_body_that_is_not_utf8_or_nested_too_deeply_is_malformed_json(tmp_path: Path, body: bytes) -> None:
    app = create_app(load({"data_dir": str(tmp_path)}, environ={}))

    async def post() -> httpx.Response:  # no lifespan: only the console's request path
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(verify=TLS, transport=transport, base_url=ORIGIN) as client:
            headers = {"Origin": ORIGIN, "Content-Type": "application/json"}
            return await client.post("/api/login", content=body, headers=headers)

    response = anyio.run(post)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "malformed_json"


def _scope(*cookies: bytes) -> dict[str, object]:
    return {"headers": [(b"cookie", value) for value in cookies]}


def test_a_malformed_cookie_of_another_site_does_not_sign_the_owner_out() -> None:
    assert session_token(_scope(b'a=b"c; sightline_session=tok123; d="')) == "tok123"
    assert session_token(_scope(b"junk; =x; sightline_session=tok123")) == "tok123"


def test_of_duplicate_session_cookies_the_first_wins() -> None:
    assert session_token(_scope(b"sightline_session=first; sightline_session=second")) == "first"
    assert session_token(_scope(b"x=1", b"sightline_session=first", b"sightline_session=second")) == "first"
    assert session_token(_scope(b"other=1")) is None
