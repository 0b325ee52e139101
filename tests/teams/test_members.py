"""Team members: invitations by one-time link, roles, viewers' sites, and removing members."""

from __future__ import annotations

import uuid

import httpx

from tests.support.server import LiveServer
from tests.support.team import (
    MEMBER_PASSWORD,
    client,
    close_member_clients,
    invite,
    join,
    new_member,
    token_of,
)

__all__ = ["close_member_clients"]


def _site(client: httpx.Client) -> dict[str, object]:
    response = client.post(
        "/api/sites", json={"name": "Shop", "domain": f"s{uuid.uuid4().hex[:10]}.example.com"}
    )
    assert response.status_code == 201, response.text
    site: dict[str, object] = response.json()
    return site


def test_an_invitation_answers_with_a_one_time_link_and_its_expiry(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    created = invite(owner, "admin", email="New.Admin@Example.com")
    assert set(created) >= {"id", "email", "role", "url", "expires_at"}
    assert created["email"] == "new.admin@example.com"
    assert str(created["url"]).startswith(console_server.origin + "/invite#token=")
    listed = owner.get("/api/invitations").json()["invitations"]
    assert [i["id"] for i in listed if i["id"] == created["id"]]
    assert all("url" not in i for i in listed), "the link is shown once, when created"


def test_accepting_an_invitation_signs_the_invitee_in_with_their_role(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    invitation = invite(owner, "viewer")
    anonymous = client(console_server)
    looked_up = anonymous.post("/api/invitations/lookup", json={"token": token_of(str(invitation["url"]))})
    assert looked_up.status_code == 200
    assert looked_up.json()["email"] == invitation["email"]
    assert looked_up.json()["role"] == "viewer"
    weak = anonymous.post(
        "/api/invitations/accept", json={"token": token_of(str(invitation["url"])), "password": "x"}
    )
    assert weak.status_code == 422
    assert weak.json()["error"]["field"] == "password"
    member = join(console_server, invitation)
    me = member.get("/api/me").json()
    assert me["email"] == invitation["email"]
    assert me["role"] == "viewer"
    again = anonymous.post(
        "/api/invitations/accept",
        json={"token": token_of(str(invitation["url"])), "password": MEMBER_PASSWORD},
    )
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "invalid_invitation"
    signed_in = client(console_server).post(
        "/api/login", json={"email": invitation["email"], "password": MEMBER_PASSWORD}
    )
    assert signed_in.status_code == 200
    assert signed_in.json()["user"]["role"] == "viewer"


def test_the_owners_me_says_owner(owner: httpx.Client) -> None:
    assert owner.get("/api/me").json()["role"] == "owner"


def test_bad_invitations_are_refused_naming_the_field(owner: httpx.Client) -> None:
    for body, field in (
        ({"email": "not an address", "role": "viewer"}, "email"),
        ({"email": "a@example.com", "role": "owner"}, "role"),
        ({"email": "a@example.com", "role": "viewer", "site_ids": [987654]}, "site_ids"),
        ({"email": "a@example.com", "role": "viewer", "site_ids": [2**64, -1]}, "site_ids"),
        ({"email": "a@example.com", "role": "admin", "site_ids": []}, "site_ids"),
    ):
        response = owner.post("/api/invitations", json=body)
        assert response.status_code == 422, body
        assert response.json()["error"]["field"] == field
    taken = owner.post("/api/invitations", json={"email": "owner@example.com", "role": "admin"})
    assert taken.status_code == 409


def test_members_are_listed_owner_first_with_their_roles(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    admin_invite = invite(owner, "admin")
    join(console_server, admin_invite)
    listed = owner.get("/api/members").json()["members"]
    assert listed[0]["role"] == "owner"
    assert listed[0]["email"] == "owner@example.com"
    mine = [m for m in listed if m["email"] == admin_invite["email"]]
    assert mine
    assert mine[0]["role"] == "admin"
    assert mine[0]["last_seen_at"] is not None


def test_a_viewer_reads_only_the_sites_given_and_changes_nothing(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    given, other = _site(owner), _site(owner)
    viewer = new_member(console_server, owner, "viewer", [int(str(given["id"]))])
    ids = [s["id"] for s in viewer.get("/api/sites").json()["sites"]]
    assert given["id"] in ids
    assert other["id"] not in ids
    assert viewer.get(f"/api/sites/{given['id']}/reports/summary").status_code == 200
    hidden = viewer.get(f"/api/sites/{other['id']}/reports/summary")
    assert hidden.status_code == 404
    assert viewer.get(f"/api/feedback/surveys?site_id={other['id']}").status_code == 404
    refused = viewer.patch(f"/api/sites/{given['id']}", json={"name": "Mine now"})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    assert viewer.get("/api/members").status_code == 403
    assert owner.get("/api/sites").json()["sites"][-1]["name"] == "Shop"


def test_an_admin_manages_sites_and_members_but_cannot_remove_the_owner(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    admin = new_member(console_server, owner, "admin")
    site = _site(admin)
    assert site["id"] in [s["id"] for s in owner.get("/api/sites").json()["sites"]], (
        "sites belong to the team"
    )
    owner_id = owner.get("/api/me").json()["id"]
    refused = admin.delete(f"/api/members/{owner_id}")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    viewer_invite = invite(admin, "viewer")
    viewer = join(console_server, viewer_invite)
    viewer_id = viewer.get("/api/me").json()["id"]
    changed = admin.patch(f"/api/members/{viewer_id}", json={"role": "admin"})
    assert changed.status_code == 200
    assert changed.json()["role"] == "admin"
    assert viewer.get("/api/members").status_code == 200


def test_a_removed_member_is_signed_out_at_once(owner: httpx.Client, console_server: LiveServer) -> None:
    invitation = invite(owner, "admin")
    member = join(console_server, invitation)
    member_id = member.get("/api/me").json()["id"]
    assert owner.delete(f"/api/members/{member_id}").status_code == 204
    gone = member.get("/api/me")
    assert gone.status_code == 401
    assert member.get("/api/sites").status_code == 401
    login = client(console_server).post(
        "/api/login", json={"email": invitation["email"], "password": MEMBER_PASSWORD}
    )
    assert login.status_code == 401
    assert owner.delete(f"/api/members/{member_id}").status_code == 404


def test_a_withdrawn_invitation_link_no_longer_works(owner: httpx.Client, console_server: LiveServer) -> None:
    invitation = invite(owner, "viewer")
    assert owner.delete(f"/api/invitations/{invitation['id']}").status_code == 204
    response = client(console_server).post(
        "/api/invitations/accept",
        json={"token": token_of(str(invitation["url"])), "password": MEMBER_PASSWORD},
    )
    assert response.status_code == 404


def test_removing_a_member_ends_their_invitations_api_keys_and_shared_links(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site_id = _site(owner)["id"]
    admin = new_member(console_server, owner, "admin")
    admin_id = admin.get("/api/me").json()["id"]
    # The admin invites a second address of their own as admin, makes a key and a shared link.
    pending = invite(admin, "admin")
    key = admin.post("/api/keys", json={"name": "Dashboard"})
    assert key.status_code == 201, key.text
    share = admin.post(f"/api/sites/{site_id}/shares", json={})
    assert share.status_code == 201, share.text
    listed = next(m for m in owner.get("/api/members").json()["members"] if m["id"] == admin_id)
    assert listed["grants"] == {"invitations": 1, "api_keys": 1, "shares": 1}

    assert owner.delete(f"/api/members/{admin_id}").status_code == 204

    comeback = client(console_server).post(
        "/api/invitations/accept", json={"token": token_of(str(pending["url"])), "password": MEMBER_PASSWORD}
    )
    assert comeback.status_code == 404, comeback.text
    assert comeback.json()["error"]["code"] == "invalid_invitation"
    assert all(i["id"] != pending["id"] for i in owner.get("/api/invitations").json()["invitations"])
    bearer = client(console_server)
    bearer.headers["Authorization"] = f"Bearer {key.json()['key']}"
    assert bearer.get(f"/api/sites/{site_id}/reports/summary").status_code == 401
    link = str(share.json()["url"]).removeprefix(console_server.origin)
    assert client(console_server).get(f"{link}/api/site").status_code == 404
    assert owner.get(f"/api/sites/{site_id}/shares").json()["shares"] == []


def test_an_invitation_made_by_an_admin_who_became_a_viewer_no_longer_works(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    admin = new_member(console_server, owner, "admin")
    admin_id = admin.get("/api/me").json()["id"]
    pending = invite(admin, "admin")
    assert owner.patch(f"/api/members/{admin_id}", json={"role": "viewer"}).status_code == 200
    accepted = client(console_server).post(
        "/api/invitations/accept", json={"token": token_of(str(pending["url"])), "password": MEMBER_PASSWORD}
    )
    assert accepted.status_code == 404, accepted.text
