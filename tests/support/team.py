"""Members for tests: invite someone through the API and accept the link as they would."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.support.server import LiveServer

MEMBER_PASSWORD = "member password of some length"


def token_of(url: str) -> str:
    assert "#token=" in url, url
    return url.split("#token=", 1)[1]


def invite(
    inviter: httpx.Client, role: str, site_ids: list[int] | None = None, email: str | None = None
) -> dict[str, object]:
    body: dict[str, object] = {"email": email or f"m{uuid.uuid4().hex[:10]}@example.com", "role": role}
    if site_ids is not None:
        body["site_ids"] = site_ids
    response = inviter.post("/api/invitations", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, object] = response.json()
    return created


OPEN: list[httpx.Client] = []


@pytest.fixture(autouse=True)
def close_member_clients() -> Iterator[None]:
    """Every client made here is closed when the test ends."""
    yield
    while OPEN:
        OPEN.pop().close()


def client(server: LiveServer) -> httpx.Client:
    made = server.client()
    OPEN.append(made)
    return made


def join(server: LiveServer, invitation: dict[str, object]) -> httpx.Client:
    """A client signed in as the invitee, after accepting the invitation with a password."""
    made = client(server)
    response = made.post(
        "/api/invitations/accept",
        json={"token": token_of(str(invitation["url"])), "password": MEMBER_PASSWORD},
    )
    assert response.status_code == 201, response.text
    return made


def new_member(
    server: LiveServer, inviter: httpx.Client, role: str, site_ids: list[int] | None = None
) -> httpx.Client:
    return join(server, invite(inviter, role, site_ids))
