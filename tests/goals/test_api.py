"""Goals through the console API on a real server (SQLite and PostgreSQL): create, list, edit,
delete, and every bad input answered 422/404/409 in the error shape."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import sign_in
from tests.support.server import LiveServer, create_owner


@pytest.fixture
def site_id(owner: httpx.Client) -> int:
    created = owner.post(
        "/api/sites", json={"name": "Goals", "domain": f"goals-{uuid.uuid4().hex[:10]}.example.com"}
    )
    assert created.status_code == 201, created.text
    return int(created.json()["id"])


@pytest.fixture(scope="module")
def stranger(console_server: LiveServer) -> Iterator[httpx.Client]:
    create_owner(console_server, "goals-other@example.com", "another long enough password")
    client = sign_in(console_server, "goals-other@example.com", "another long enough password")
    yield client
    client.close()


def test_goals_are_created_listed_changed_and_deleted(owner: httpx.Client, site_id: int) -> None:
    assert owner.get(f"/api/sites/{site_id}/goals").json() == {"goals": []}
    page = owner.post(
        f"/api/sites/{site_id}/goals",
        json={"name": "Pricing", "kind": "page", "match": "glob", "path": "/pricing/*"},
    )
    assert page.status_code == 201, page.text
    body = page.json()
    assert {k: body[k] for k in ("site_id", "name", "kind", "match", "path")} == {
        "site_id": site_id,
        "name": "Pricing",
        "kind": "page",
        "match": "glob",
        "path": "/pricing/*",
    }
    assert "event" not in body
    assert body["created_at"]
    event = owner.post(
        f"/api/sites/{site_id}/goals",
        json={
            "name": "Purchase",
            "kind": "event",
            "event": "purchase",
            "prop": {"key": "plan", "value": "pro"},
            "revenue": {"prop": "amount", "currency": "eur"},
        },
    )
    assert event.status_code == 201, event.text
    assert event.json()["revenue"] == {"prop": "amount", "currency": "EUR"}
    assert event.json()["prop"] == {"key": "plan", "value": "pro"}
    listed = owner.get(f"/api/sites/{site_id}/goals").json()["goals"]
    assert [g["name"] for g in listed] == ["Pricing", "Purchase"]

    changed = owner.patch(f"/api/goals/{event.json()['id']}", json={"name": "Pro purchase", "prop": None})
    assert changed.status_code == 200, changed.text
    assert changed.json()["name"] == "Pro purchase"
    assert "prop" not in changed.json()
    assert changed.json()["revenue"]["currency"] == "EUR"
    to_event = owner.patch(f"/api/goals/{body['id']}", json={"kind": "event", "event": "signup"})
    assert to_event.status_code == 200, to_event.text
    assert to_event.json()["event"] == "signup"
    assert "path" not in to_event.json()

    assert owner.delete(f"/api/goals/{body['id']}").status_code == 204
    assert owner.delete(f"/api/goals/{body['id']}").status_code == 404
    assert [g["name"] for g in owner.get(f"/api/sites/{site_id}/goals").json()["goals"]] == ["Pro purchase"]


@pytest.mark.parametrize(
    ("goal", "field"),
    [
        ({"kind": "page", "match": "exact", "path": "/"}, "name"),
        ({"name": "x", "kind": "visit"}, "kind"),
        ({"name": "x", "kind": "page", "match": "regex", "path": "/"}, "match"),
        ({"name": "x", "kind": "page", "match": "exact", "path": "pricing"}, "path"),
        ({"name": "x", "kind": "page", "match": "exact", "path": "/a*"}, "path"),
        ({"name": "x", "kind": "page", "match": "exact", "path": "/a?b=1"}, "path"),
        ({"name": "x", "kind": "page", "match": "exact", "path": "/", "event": "e"}, "event"),
        ({"name": "x", "kind": "event"}, "event"),
        ({"name": "x", "kind": "event", "event": "e", "path": "/"}, "path"),
        ({"name": "x", "kind": "event", "event": "e", "prop": {"key": "k"}}, "prop.value"),
        ({"name": "x", "kind": "event", "event": "e", "prop": "k=v"}, "prop"),
        (
            {"name": "x", "kind": "event", "event": "e", "revenue": {"prop": "amount", "currency": "euro"}},
            "revenue.currency",
        ),
        ({"name": "x", "kind": "event", "event": "e", "colour": "red"}, "colour"),
        ({"name": "y" * 101, "kind": "event", "event": "e"}, "name"),
    ],
)
def test_a_bad_goal_is_refused_naming_the_field(
    owner: httpx.Client, site_id: int, goal: dict[str, Any], field: str
) -> None:
    response = owner.post(f"/api/sites/{site_id}/goals", json=goal)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert response.json()["error"]["message"]


def test_a_second_goal_of_the_same_name_is_a_conflict(owner: httpx.Client, site_id: int) -> None:
    goal = {"name": "Signup", "kind": "event", "event": "signup"}
    assert owner.post(f"/api/sites/{site_id}/goals", json=goal).status_code == 201
    again = owner.post(f"/api/sites/{site_id}/goals", json=goal)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "duplicate"
    other = owner.post(f"/api/sites/{site_id}/goals", json={**goal, "name": "Other"}).json()
    renamed = owner.patch(f"/api/goals/{other['id']}", json={"name": "Signup"})
    assert renamed.status_code == 409


def test_goals_of_another_owners_site_are_not_found(
    owner: httpx.Client, stranger: httpx.Client, site_id: int
) -> None:
    goal = owner.post(f"/api/sites/{site_id}/goals", json={"name": "G", "kind": "event", "event": "e"}).json()
    assert stranger.get(f"/api/sites/{site_id}/goals").status_code == 404
    assert (
        stranger.post(
            f"/api/sites/{site_id}/goals", json={"name": "H", "kind": "event", "event": "e"}
        ).status_code
        == 404
    )
    assert stranger.patch(f"/api/goals/{goal['id']}", json={"name": "Mine"}).status_code == 404
    assert stranger.delete(f"/api/goals/{goal['id']}").status_code == 404
    assert owner.get(f"/api/sites/{site_id}/goals").json()["goals"][0]["name"] == "G"


def test_a_goal_filter_naming_no_goal_of_the_site_is_refused(owner: httpx.Client, site_id: int) -> None:
    for value, status in (("999999", 422), ("abc", 422), ("~1", 422)):
        response = owner.get(f"/api/sites/{site_id}/reports/summary", params={"goal": value})
        assert response.status_code == status, response.text
        assert response.json()["error"]["field"] == "goal"


def test_segments_are_saved_listed_renamed_and_deleted_with_checked_filters(
    owner: httpx.Client, stranger: httpx.Client, site_id: int
) -> None:
    filters = {"browser": "!Safari", "page": "~/blog", "prop": "plan:pro"}
    created = owner.post(f"/api/sites/{site_id}/segments", json={"name": "Blog readers", "filters": filters})
    assert created.status_code == 201, created.text
    segment = created.json()
    assert segment["filters"] == filters
    assert owner.get(f"/api/sites/{site_id}/segments").json()["segments"][0]["name"] == "Blog readers"
    renamed = owner.patch(f"/api/segments/{segment['id']}", json={"name": "Readers"})
    assert renamed.status_code == 200
    assert renamed.json()["filters"] == filters
    for bad, field in (
        ({"name": "x", "filters": {"colour": "red"}}, "filters.colour"),
        ({"name": "x", "filters": {"entry_page": "pricing"}}, "filters.entry_page"),
        ({"name": "x", "filters": {}}, "filters"),
        ({"name": "", "filters": filters}, "name"),
    ):
        refused = owner.post(f"/api/sites/{site_id}/segments", json=bad)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["field"] == field
    again = owner.post(f"/api/sites/{site_id}/segments", json={"name": "Readers", "filters": filters})
    assert again.status_code == 409
    assert stranger.delete(f"/api/segments/{segment['id']}").status_code == 404
    assert owner.delete(f"/api/segments/{segment['id']}").status_code == 204
    assert owner.get(f"/api/sites/{site_id}/segments").json()["segments"] == []
