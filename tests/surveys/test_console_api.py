"""The owner's survey API: create, list, read, edit, publish, archive, revisions and scoping."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.conftest import sign_in
from tests.support.server import LiveServer, create_owner
from tests.surveys.helpers import QUESTIONS, create_site, create_survey, publish, survey_body


def test_a_new_survey_is_a_draft_of_revision_one(owner: httpx.Client) -> None:
    site = create_site(owner)
    survey = create_survey(owner, site["id"], accent_color="#AA3300")
    assert survey["status"] == "draft"
    assert survey["revision"] is None
    assert survey["draft_revision"] == 1
    assert survey["site_id"] == site["id"]
    assert survey["accent_color"] == "#aa3300"
    assert [q["id"] for q in survey["questions"]] == ["score", "plan", "liked", "comment"]
    assert survey["questions"][0] == {
        "id": "score",
        "type": "rating",
        "title": "How likely are you to recommend us?",
        "required": False,
        "scale": "0-10",
    }
    assert survey["targeting"] == {"include": [{"match": "prefix", "path": "/app/"}], "exclude": []}
    assert survey["responses"] == 0
    assert survey["revisions"] == []


def test_missing_ids_targeting_and_colour_get_defaults(owner: httpx.Client) -> None:
    site = create_site(owner)
    questions = [
        {"type": "single_choice", "title": "Pick", "options": [{"label": "A"}, {"label": "B"}]},
        {"type": "rating", "title": "Rate"},
        {"type": "text", "title": "Say"},
    ]
    response = owner.post(
        "/api/feedback/surveys", json={"site_id": site["id"], "name": "Quick", "questions": questions}
    )
    assert response.status_code == 201, response.text
    survey = response.json()
    choice, rating, text = survey["questions"]
    assert choice["id"]
    assert len({option["id"] for option in choice["options"]}) == 2
    assert rating["scale"] == "1-5"
    assert text["max_length"] == 2000
    assert survey["targeting"] == {"include": [], "exclude": []}
    assert survey["accent_color"].startswith("#")


def test_publishing_freezes_the_revision_and_editing_opens_the_next_draft(owner: httpx.Client) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    published = publish(owner, survey["id"])
    assert (published["status"], published["revision"], published["draft_revision"]) == ("published", 1, None)
    assert [r["revision"] for r in published["revisions"]] == [1]

    renamed = owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"name": "Renamed"})
    assert renamed.status_code == 200, renamed.text
    assert (renamed.json()["revision"], renamed.json()["draft_revision"]) == (1, 2)
    assert renamed.json()["name"] == "Renamed"
    assert renamed.json()["status"] == "published"

    again = owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"accent_color": "#112233"})
    assert again.json()["draft_revision"] == 2

    first = owner.get(f"/api/feedback/surveys/{survey['id']}/revisions/1").json()
    assert first["name"] == "Product feedback"
    assert first["published"] is True
    draft = owner.get(f"/api/feedback/surveys/{survey['id']}/revisions/2").json()
    assert (draft["name"], draft["accent_color"], draft["published"]) == ("Renamed", "#112233", False)

    second = publish(owner, survey["id"])
    assert (second["revision"], second["draft_revision"]) == (2, None)
    assert [r["revision"] for r in second["revisions"]] == [1, 2]
    assert owner.get(f"/api/feedback/surveys/{survey['id']}/revisions/1").json()["name"] == "Product feedback"


def test_publishing_twice_keeps_the_same_revision(owner: httpx.Client) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    publish(owner, survey["id"])
    assert publish(owner, survey["id"])["revision"] == 1


def test_an_edit_that_changes_nothing_opens_no_draft(owner: httpx.Client) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    publish(owner, survey["id"])
    same = owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"name": "Product feedback"})
    assert same.status_code == 200
    assert same.json()["draft_revision"] is None


def test_question_ids_stay_stable_and_may_not_change_type(owner: httpx.Client) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    publish(owner, survey["id"])
    changed = [dict(QUESTIONS[0], type="text"), *QUESTIONS[1:]]
    changed[0].pop("scale")
    response = owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"questions": changed})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "question_type_changed"
    assert response.json()["error"]["field"] == "questions.0.type"

    reordered = [QUESTIONS[3], QUESTIONS[0]]
    response = owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"questions": reordered})
    assert response.status_code == 200
    assert [q["id"] for q in response.json()["questions"]] == ["comment", "score"]


def test_archiving_hides_a_survey_and_publishing_shows_it_again(owner: httpx.Client) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    publish(owner, survey["id"])
    archived = owner.post(f"/api/feedback/surveys/{survey['id']}/archive", json={})
    assert archived.status_code == 200
    assert archived.json()["status"] == "archived"
    assert archived.json()["archived_at"]
    assert archived.json()["revision"] == 1
    restored = publish(owner, survey["id"])
    assert (restored["status"], restored["archived_at"], restored["revision"]) == ("published", None, 1)


def test_surveys_are_listed_per_site_or_for_every_site(owner: httpx.Client) -> None:
    first, second = create_site(owner), create_site(owner)
    a = create_survey(owner, first["id"])
    b = create_survey(owner, second["id"], name="Other")
    listed = owner.get("/api/feedback/surveys", params={"site_id": first["id"]})
    assert listed.status_code == 200
    assert [s["id"] for s in listed.json()["surveys"]] == [a["id"]]
    everything = [s["id"] for s in owner.get("/api/feedback/surveys").json()["surveys"]]
    assert {a["id"], b["id"]} <= set(everything)
    assert owner.get(f"/api/feedback/surveys/{b['id']}").json()["name"] == "Other"


@pytest.mark.parametrize(("site_id", "status"), [("abc", 422), ("0", 422), ("-3", 422), ("999999", 404)])
def test_listing_rejects_a_bad_or_unknown_site_id(owner: httpx.Client, site_id: str, status: int) -> None:
    response = owner.get("/api/feedback/surveys", params={"site_id": site_id})
    assert response.status_code == status
    if status == 422:
        assert response.json()["error"]["field"] == "site_id"


def _without(question: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in question.items() if k != key}


INVALID: list[tuple[dict[str, Any], str, str]] = [
    ({"name": ""}, "name", "invalid_field"),
    ({"name": "x" * 101}, "name", "invalid_field"),
    ({"name": 5}, "name", "invalid_field"),
    ({"name": "lone \ud800 surrogate"}, "name", "invalid_field"),
    ({"name": "two\nlines"}, "name", "invalid_field"),
    ({"questions": []}, "questions", "invalid_field"),
    ({"questions": "many"}, "questions", "invalid_field"),
    ({"questions": [{"type": "slider", "title": "T"}]}, "questions.0.type", "invalid_field"),
    ({"questions": [{"type": "rating", "title": ""}]}, "questions.0.title", "invalid_field"),
    ({"questions": [{"type": "rating", "title": "T", "scale": "1-7"}]}, "questions.0.scale", "invalid_field"),
    (
        {"questions": [{"type": "rating", "title": "T", "options": []}]},
        "questions.0.options",
        "unknown_field",
    ),
    (
        {"questions": [{"type": "text", "title": "T", "max_length": 2001}]},
        "questions.0.max_length",
        "invalid_field",
    ),
    (
        {"questions": [{"type": "text", "title": "T", "max_length": 0}]},
        "questions.0.max_length",
        "invalid_field",
    ),
    (
        {"questions": [{"type": "text", "title": "T", "required": "yes"}]},
        "questions.0.required",
        "invalid_field",
    ),
    ({"questions": [{"type": "text", "title": "T", "id": "bad id"}]}, "questions.0.id", "invalid_field"),
    (
        {"questions": [{"type": "text", "title": "A", "id": "a"}, {"type": "text", "title": "B", "id": "a"}]},
        "questions.1.id",
        "duplicate_id",
    ),
    ({"questions": [{"type": "single_choice", "title": "T"}]}, "questions.0.options", "invalid_field"),
    (
        {"questions": [{"type": "single_choice", "title": "T", "options": [{"label": "A"}]}]},
        "questions.0.options",
        "invalid_field",
    ),
    (
        {
            "questions": [
                {"type": "multiple_choice", "title": "T", "options": [{"label": "A"}, {"label": ""}]}
            ]
        },
        "questions.0.options.1.label",
        "invalid_field",
    ),
    (
        {"questions": [{"type": "single_choice", "title": "T", "options": [{"label": "A"}, {"label": "A"}]}]},
        "questions.0.options.1.label",
        "duplicate_label",
    ),
    (
        {
            "questions": [
                {
                    "type": "single_choice",
                    "title": "T",
                    "options": [{"id": "x", "label": "A"}, {"id": "x", "label": "B"}],
                }
            ]
        },
        "questions.0.options.1.id",
        "duplicate_id",
    ),
    ({"questions": [{"type": "text", "title": "T"}] * 21}, "questions", "invalid_field"),
    ({"targeting": []}, "targeting", "invalid_field"),
    (
        {"targeting": {"include": [{"match": "regex", "path": "/"}]}},
        "targeting.include.0.match",
        "invalid_field",
    ),
    (
        {"targeting": {"exclude": [{"match": "exact", "path": "pricing"}]}},
        "targeting.exclude.0.path",
        "invalid_field",
    ),
    (
        {"targeting": {"include": [{"match": "exact", "path": "/a?b=1"}]}},
        "targeting.include.0.path",
        "invalid_field",
    ),
    (
        {"targeting": {"include": [{"match": "prefix", "path": "/a/*"}]}},
        "targeting.include.0.path",
        "invalid_field",
    ),
    ({"targeting": {"only": []}}, "targeting.only", "unknown_field"),
    (
        {"targeting": {"include": [{"match": "exact", "path": "/\udc00"}]}},
        "targeting.include.0.path",
        "invalid_field",
    ),
    ({"targeting": {"include": [{"match": "exact"}]}}, "targeting.include.0.path", "invalid_field"),
    ({"accent_color": "red"}, "accent_color", "invalid_field"),
    ({"accent_color": "#12345"}, "accent_color", "invalid_field"),
    ({"colour": "#123456"}, "colour", "unknown_field"),
]


@pytest.mark.parametrize(("changes", "field", "code"), INVALID)
def test_creating_rejects_each_invalid_field_naming_it(
    owner: httpx.Client, changes: dict[str, Any], field: str, code: str
) -> None:
    site = create_site(owner)
    # json.dumps escapes lone surrogates as \\udXXX, which a browser's JSON.stringify also sends.
    body = json.dumps(survey_body(site["id"], **changes))
    response = owner.post("/api/feedback/surveys", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert response.json()["error"]["code"] == code


@pytest.mark.parametrize(("changes", "field", "code"), INVALID[:8])
def test_editing_rejects_each_invalid_field_and_keeps_the_survey(
    owner: httpx.Client, changes: dict[str, Any], field: str, code: str
) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    response = owner.patch(
        f"/api/feedback/surveys/{survey['id']}",
        content=json.dumps(changes),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field
    assert owner.get(f"/api/feedback/surveys/{survey['id']}").json()["questions"] == survey["questions"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "N", "questions": QUESTIONS}, "site_id"),
        ({"site_id": "1", "name": "N", "questions": QUESTIONS}, "site_id"),
        ({"site_id": 1, "questions": QUESTIONS}, "name"),
        ({"site_id": 1, "name": "N"}, "questions"),
    ],
)
def test_creating_requires_site_name_and_questions(
    owner: httpx.Client, body: dict[str, Any], field: str
) -> None:
    response = owner.post("/api/feedback/surveys", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == field


def test_a_body_that_is_not_an_object_is_rejected(owner: httpx.Client) -> None:
    response = owner.post("/api/feedback/surveys", json=[1, 2])
    assert response.status_code == 422
    malformed = owner.post(
        "/api/feedback/surveys", content=b"{nope", headers={"Content-Type": "application/json"}
    )
    assert malformed.status_code == 400
    assert malformed.json()["error"]["code"] == "malformed_json"


def test_editing_cannot_move_a_survey_to_another_site(owner: httpx.Client) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    response = owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"site_id": 1})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "site_id"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/feedback/surveys/999999"),
        ("PATCH", "/api/feedback/surveys/999999"),
        ("POST", "/api/feedback/surveys/999999/publish"),
        ("POST", "/api/feedback/surveys/999999/archive"),
        ("GET", "/api/feedback/surveys/999999/export"),
        ("GET", "/api/feedback/surveys/abc"),
    ],
)
def test_unknown_surveys_are_not_found(owner: httpx.Client, method: str, path: str) -> None:
    response = owner.request(method, path, json={} if method != "GET" else None)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_another_owners_surveys_and_sites_are_not_found(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site = create_site(owner)
    survey = create_survey(owner, site["id"])
    publish(owner, survey["id"])
    create_owner(console_server, "other@example.com", "another long password here")
    other = sign_in(console_server, "other@example.com", "another long password here")
    path = f"/api/feedback/surveys/{survey['id']}"
    try:
        assert other.get(path).status_code == 404
        assert other.patch(path, json={"name": "Mine"}).status_code == 404
        assert other.post(f"{path}/publish", json={}).status_code == 404
        assert other.post(f"{path}/archive", json={}).status_code == 404
        assert other.get(f"{path}/export").status_code == 404
        assert other.get(f"{path}/revisions/1").status_code == 404
        assert other.get("/api/feedback/surveys", params={"site_id": site["id"]}).status_code == 404
        assert other.post("/api/feedback/surveys", json=survey_body(site["id"])).status_code == 404
        assert survey["id"] not in [s["id"] for s in other.get("/api/feedback/surveys").json()["surveys"]]
    finally:
        other.close()
    assert owner.get(path).json()["name"] == "Product feedback"


def test_survey_routes_need_a_session(console_server: LiveServer) -> None:
    with console_server.client() as anonymous:
        assert anonymous.get("/api/feedback/surveys").status_code == 401
        assert anonymous.get("/api/feedback/surveys/1/export").status_code == 401
