"""Shared dashboards: links per site, with or without a password, rate-limited, 404 once deleted."""

from __future__ import annotations

import uuid

import httpx

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.support.server import LiveServer, create_owner
from tests.support.team import client, close_member_clients, new_member

__all__ = ["close_member_clients"]


def _site(owner: httpx.Client) -> int:
    response = owner.post(
        "/api/sites", json={"name": "Shop", "domain": f"h{uuid.uuid4().hex[:10]}.example.com"}
    )
    assert response.status_code == 201
    return int(response.json()["id"])


def _path(url: str, server: LiveServer) -> str:
    assert url.startswith(server.origin + "/share/")
    return url.removeprefix(server.origin)


def test_a_link_shows_the_sites_reports_without_a_session(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site_id = _site(owner)
    created = owner.post(f"/api/sites/{site_id}/shares", json={})
    assert created.status_code == 201
    share = created.json()
    assert set(share) >= {"id", "url"}
    link = _path(share["url"], console_server)
    visitor = client(console_server)
    page = visitor.get(link)
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    site = visitor.get(f"{link}/api/site").json()
    assert site["id"] == site_id
    assert site["password_required"] is False
    summary = visitor.get(f"{link}/api/reports/summary?range=30d&compare=true")
    assert summary.status_code == 200
    assert summary.json()["site_id"] == site_id
    assert visitor.get(f"{link}/api/reports/breakdown?dimension=pages").status_code == 200
    bad = visitor.get(f"{link}/api/reports/breakdown?dimension=nope")
    assert bad.status_code == 422
    assert visitor.get(f"{link}/api/reports/recordings").status_code == 404
    assert visitor.get(f"/api/sites/{site_id}/recordings").status_code == 401
    assert visitor.get(f"/api/sites/{site_id}/reports/summary").status_code == 401
    listed = owner.get(f"/api/sites/{site_id}/shares").json()["shares"]
    assert [s["url"] for s in listed] == [share["url"]]
    assert listed[0]["last_viewed_at"] is not None


def test_a_deleted_link_answers_404(owner: httpx.Client, console_server: LiveServer) -> None:
    site_id = _site(owner)
    share = owner.post(f"/api/sites/{site_id}/shares", json={}).json()
    link = _path(share["url"], console_server)
    visitor = client(console_server)
    assert visitor.get(f"{link}/api/reports/summary").status_code == 200
    assert owner.delete(f"/api/shares/{share['id']}").status_code == 204
    assert visitor.get(link).status_code == 404
    assert visitor.get(f"{link}/api/site").status_code == 404
    assert visitor.get(f"{link}/api/reports/summary").status_code == 404
    assert owner.delete(f"/api/shares/{share['id']}").status_code == 404


def test_a_link_with_a_password_opens_only_after_it_is_given(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site_id = _site(owner)
    short = owner.post(f"/api/sites/{site_id}/shares", json={"password": "short"})
    assert short.status_code == 422
    assert short.json()["error"]["field"] == "password"
    share = owner.post(f"/api/sites/{site_id}/shares", json={"password": "open sesame"}).json()
    link = _path(share["url"], console_server)
    visitor = client(console_server)
    assert visitor.get(f"{link}/api/site").json()["password_required"] is True
    locked = visitor.get(f"{link}/api/reports/summary")
    assert locked.status_code == 401
    assert locked.json()["error"]["code"] == "password_required"
    wrong = visitor.post(f"{link}/api/unlock", json={"password": "open barley"})
    assert wrong.status_code == 401
    assert visitor.post(f"{link}/api/unlock", json={"password": "open sesame"}).status_code == 204
    assert visitor.get(f"{link}/api/reports/summary").status_code == 200
    assert visitor.get(f"{link}/api/site").json()["unlocked"] is True


def test_viewers_cannot_create_or_list_links(owner: httpx.Client, console_server: LiveServer) -> None:
    site_id = _site(owner)
    viewer = new_member(console_server, owner, "viewer")
    assert viewer.post(f"/api/sites/{site_id}/shares", json={}).status_code == 403
    assert viewer.get(f"/api/sites/{site_id}/shares").status_code == 403


def test_a_link_over_its_rate_limit_is_told_when_to_retry(start_server: StartServer) -> None:
    server = start_server(env={"SIGHTLINE_SHARE_REQUESTS_PER_MINUTE": "3"})
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        site_id = _site(owner)
        link = _path(owner.post(f"/api/sites/{site_id}/shares", json={}).json()["url"], server)
    finally:
        owner.close()
    visitor = client(server)
    answers = [visitor.get(f"{link}/api/reports/summary") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert int(answers[-1].headers["Retry-After"]) >= 1
