from __future__ import annotations

import httpx

from tests.support.server import LiveServer


def test_me_returns_the_signed_in_owner(owner: httpx.Client) -> None:
    response = owner.get("/api/me")
    assert response.status_code == 200
    assert response.json()["email"] == "owner@example.com"
    assert set(response.json()) == {"id", "email", "created_at", "role"}


def test_sites_can_be_created_and_listed(owner: httpx.Client, console_server: LiveServer) -> None:
    created = owner.post("/api/sites", json={"name": "Shop", "domain": "Smoke-Shop.Example.COM"})
    assert created.status_code == 201, created.text
    site = created.json()
    assert site["domain"] == "smoke-shop.example.com"
    assert site["connection"]["state"] == "pending"
    assert f'src="{console_server.base_url}/analytics.js" data-site="{site["key"]}"' in site["snippet"]
    listed = owner.get("/api/sites").json()["sites"]
    assert site["id"] in [s["id"] for s in listed]
