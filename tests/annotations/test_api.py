"""Annotations through the console API on a real server (SQLite and PostgreSQL): added, listed,
changed and removed by the owner, carried by the time series of their period (a shared dashboard's
too), read-only for a viewer, and every bad input answered in the error shape."""

from __future__ import annotations

import uuid
from datetime import date, timedelta

import httpx
import pytest

from tests.conftest import sign_in
from tests.support.server import LiveServer, create_owner
from tests.support.team import OPEN, client, close_member_clients, new_member

__all__ = ["close_member_clients"]


@pytest.fixture
def site_id(owner: httpx.Client) -> int:
    domain = f"notes-{uuid.uuid4().hex[:10]}.example.com"
    created = owner.post("/api/sites", json={"name": "Notes", "domain": domain})
    assert created.status_code == 201, created.text
    return int(created.json()["id"])


def _today(owner: httpx.Client, site_id: int) -> date:
    """The site's today, as its reports count it."""
    answer = owner.get(f"/api/sites/{site_id}/reports/timeseries?range=today")
    assert answer.status_code == 200, answer.text
    return date.fromisoformat(answer.json()["range"]["from"])


def test_notes_are_added_listed_changed_and_removed(owner: httpx.Client, site_id: int) -> None:
    assert owner.get(f"/api/sites/{site_id}/annotations").json() == {"annotations": []}
    made = owner.post(
        f"/api/sites/{site_id}/annotations", json={"date": "2026-11-02", "text": " New pricing "}
    )
    assert made.status_code == 201, made.text
    note = made.json()
    assert {k: note[k] for k in ("site_id", "date", "text")} == {
        "site_id": site_id,
        "date": "2026-11-02",
        "text": "New pricing",
    }
    assert note["created_at"]
    assert isinstance(note["id"], int)
    earlier = owner.post(f"/api/sites/{site_id}/annotations", json={"date": "2026-10-30", "text": "Outage"})
    assert earlier.status_code == 201
    listed = owner.get(f"/api/sites/{site_id}/annotations").json()["annotations"]
    assert [n["text"] for n in listed] == ["Outage", "New pricing"]

    changed = owner.patch(f"/api/annotations/{note['id']}", json={"date": "2026-11-03"})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["date"], changed.json()["text"]) == ("2026-11-03", "New pricing")
    renamed = owner.patch(f"/api/annotations/{note['id']}", json={"text": "Pricing v2"})
    assert renamed.json()["text"] == "Pricing v2"

    assert owner.delete(f"/api/annotations/{note['id']}").status_code == 204
    gone = owner.delete(f"/api/annotations/{note['id']}")
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == "not_found"
    assert [n["text"] for n in owner.get(f"/api/sites/{site_id}/annotations").json()["annotations"]] == [
        "Outage"
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "No day"}, "date"),
        ({"date": "2026-11-02"}, "text"),
        ({"date": "2026-02-30", "text": "Not a day"}, "date"),
        ({"date": "02/11/2026", "text": "Another format"}, "date"),
        ({"date": "1999-12-31", "text": "Too early"}, "date"),
        ({"date": 20261102, "text": "A number"}, "date"),
        ({"date": "2026-11-02", "text": "   "}, "text"),
        ({"date": "2026-11-02", "text": "x" * 501}, "text"),
        ({"date": "2026-11-02", "text": "two\nlines"}, "text"),
        ({"date": "2026-11-02", "text": "line\u2028separator"}, "text"),
        ({"date": "2026-11-02", "text": "fine", "colour": "red"}, "colour"),
    ],
)
def test_a_bad_note_is_refused_naming_its_field(
    owner: httpx.Client, site_id: int, body: dict[str, object], field: str
) -> None:
    refused = owner.post(f"/api/sites/{site_id}/annotations", json=body)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == field
    assert error["message"]
    assert owner.get(f"/api/sites/{site_id}/annotations").json() == {"annotations": []}


def test_another_owners_site_and_note_are_not_found(
    owner: httpx.Client, site_id: int, console_server: LiveServer
) -> None:
    note = owner.post(f"/api/sites/{site_id}/annotations", json={"date": "2026-11-02", "text": "Mine"}).json()
    email = f"notes-{uuid.uuid4().hex[:8]}@example.com"
    create_owner(console_server, email, "a stranger's long password")
    stranger = sign_in(console_server, email, "a stranger's long password")
    OPEN.append(stranger)
    assert stranger.get(f"/api/sites/{site_id}/annotations").status_code == 404
    assert stranger.patch(f"/api/annotations/{note['id']}", json={"text": "Theirs"}).status_code == 404
    assert stranger.delete(f"/api/annotations/{note['id']}").status_code == 404
    assert owner.get(f"/api/sites/{site_id}/annotations").json()["annotations"][0]["text"] == "Mine"


def test_the_time_series_carries_the_notes_of_its_period_only(owner: httpx.Client, site_id: int) -> None:
    today = _today(owner, site_id)
    for day, text in (
        (today, "Today's release"),
        (today - timedelta(days=3), "Campaign"),
        (today - timedelta(days=40), "Old"),
    ):
        assert (
            owner.post(
                f"/api/sites/{site_id}/annotations", json={"date": day.isoformat(), "text": text}
            ).status_code
            == 201
        )
    week = owner.get(f"/api/sites/{site_id}/reports/timeseries?range=7d").json()
    assert [(n["date"], n["text"]) for n in week["annotations"]] == [
        ((today - timedelta(days=3)).isoformat(), "Campaign"),
        (today.isoformat(), "Today's release"),
    ]
    hours = owner.get(f"/api/sites/{site_id}/reports/timeseries?range=today").json()
    assert [n["text"] for n in hours["annotations"]] == ["Today's release"]
    old = (today - timedelta(days=40)).isoformat()
    custom = owner.get(f"/api/sites/{site_id}/reports/timeseries?range=custom&from={old}&to={old}").json()
    assert [n["text"] for n in custom["annotations"]] == ["Old"]


def test_a_viewer_sees_the_notes_and_may_not_change_them(
    owner: httpx.Client, site_id: int, console_server: LiveServer
) -> None:
    today = _today(owner, site_id).isoformat()
    note = owner.post(f"/api/sites/{site_id}/annotations", json={"date": today, "text": "Launch"}).json()
    viewer = new_member(console_server, owner, "viewer", [site_id])
    assert [n["text"] for n in viewer.get(f"/api/sites/{site_id}/annotations").json()["annotations"]] == [
        "Launch"
    ]
    series = viewer.get(f"/api/sites/{site_id}/reports/timeseries?range=7d").json()
    assert [n["text"] for n in series["annotations"]] == ["Launch"]
    for refused in (
        viewer.post(f"/api/sites/{site_id}/annotations", json={"date": today, "text": "Mine"}),
        viewer.patch(f"/api/annotations/{note['id']}", json={"text": "Changed"}),
        viewer.delete(f"/api/annotations/{note['id']}"),
    ):
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "forbidden"
    admin = new_member(console_server, owner, "admin")
    added = admin.post(f"/api/sites/{site_id}/annotations", json={"date": today, "text": "By the admin"})
    assert added.status_code == 201, added.text
    assert [n["text"] for n in owner.get(f"/api/sites/{site_id}/annotations").json()["annotations"]] == [
        "Launch",
        "By the admin",
    ]


def test_a_viewer_of_another_site_cannot_reach_its_notes(
    owner: httpx.Client, site_id: int, console_server: LiveServer
) -> None:
    note = owner.post(
        f"/api/sites/{site_id}/annotations", json={"date": "2026-11-02", "text": "Hidden"}
    ).json()
    other = owner.post(
        "/api/sites", json={"name": "Other", "domain": f"o-{uuid.uuid4().hex[:8]}.example.com"}
    )
    viewer = new_member(console_server, owner, "viewer", [int(other.json()["id"])])
    assert viewer.get(f"/api/sites/{site_id}/annotations").status_code == 404
    assert viewer.patch(f"/api/annotations/{note['id']}", json={"text": "x"}).status_code == 403


def test_a_shared_dashboard_shows_the_notes_on_its_graph(
    owner: httpx.Client, site_id: int, console_server: LiveServer
) -> None:
    today = _today(owner, site_id).isoformat()
    owner.post(f"/api/sites/{site_id}/annotations", json={"date": today, "text": "Shared note"})
    link = (
        owner.post(f"/api/sites/{site_id}/shares", json={}).json()["url"].removeprefix(console_server.origin)
    )
    visitor = client(console_server)
    series = visitor.get(f"{link}/api/reports/timeseries?range=7d")
    assert series.status_code == 200, series.text
    assert [n["text"] for n in series.json()["annotations"]] == ["Shared note"]
    assert visitor.get(f"{link}/api/reports/annotations").status_code == 404
