"""The widget's side: the published survey a page may show, and storing visitors' answers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.conftest import sign_in
from tests.support.http import TLS
from tests.support.server import LiveServer
from tests.surveys.helpers import create_site, create_survey, publish, survey_body

ORIGIN = "https://shop.example.com"


@pytest.fixture(scope="module")
def published(console_server: LiveServer) -> dict[str, Any]:
    """A site on shop.example.com with one published survey (revision 1), shared by the module."""
    client = sign_in(console_server)
    try:
        site = create_site(client, "shop.example.com")
        survey = publish(client, create_survey(client, site["id"])["id"])
    finally:
        client.close()
    return {"site": site, "survey": survey}


@pytest.fixture
def visitor(console_server: LiveServer) -> Iterator[httpx.Client]:
    """A browser on the site's page: requests carry the site's Origin."""
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, headers={"Origin": ORIGIN}, timeout=30
    ) as client:
        yield client


def answer_body(published: dict[str, Any], **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "key": published["site"]["key"],
        "survey_id": published["survey"]["id"],
        "revision": 1,
        "response_id": uuid.uuid4().hex,
        "visitor_id": "v-123",
        "page_path": "/app/settings",
        "answers": {"score": 9, "plan": "pro", "liked": ["docs", "speed"], "comment": "Great, thanks!"},
    }
    body.update(changes)
    return body


def responses_of(owner: httpx.Client, survey_id: int) -> int:
    count: int = owner.get(f"/api/feedback/surveys/{survey_id}").json()["responses"]
    return count


def post(visitor: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    # As the SDK sends it: JSON text as text/plain, a CORS-simple request.
    return visitor.post(
        "/i/feedback/responses",
        content=orjson.dumps(body),
        headers={"Content-Type": "text/plain;charset=UTF-8"},
    )


def test_the_published_revision_is_served_to_the_sites_origin(
    visitor: httpx.Client, published: dict[str, Any]
) -> None:
    survey = published["survey"]
    response = visitor.get(f"/i/feedback/surveys/{survey['id']}", params={"key": published["site"]["key"]})
    assert response.status_code == 200, response.text
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert "credentials" not in " ".join(response.headers.keys())
    assert response.headers["cache-control"] == "no-store"
    shown = response.json()
    assert shown["revision"] == 1
    assert shown["questions"] == survey["questions"]
    assert shown["accent_color"] == survey["accent_color"]
    assert "targeted" not in shown


@pytest.mark.parametrize(("path", "targeted"), [("/app/billing", True), ("/pricing", False), ("/app", False)])
def test_the_survey_says_whether_a_page_is_targeted(
    visitor: httpx.Client, published: dict[str, Any], path: str, targeted: bool
) -> None:
    response = visitor.get(
        f"/i/feedback/surveys/{published['survey']['id']}",
        params={"key": published["site"]["key"], "path": path},
    )
    assert response.json()["targeted"] is targeted


def test_drafts_and_archived_surveys_are_not_served(
    owner: httpx.Client, visitor: httpx.Client, published: dict[str, Any]
) -> None:
    key = published["site"]["key"]
    draft = create_survey(owner, published["site"]["id"])
    response = visitor.get(f"/i/feedback/surveys/{draft['id']}", params={"key": key})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_survey"
    publish(owner, draft["id"])
    assert visitor.get(f"/i/feedback/surveys/{draft['id']}", params={"key": key}).status_code == 200
    owner.post(f"/api/feedback/surveys/{draft['id']}/archive", json={})
    assert visitor.get(f"/i/feedback/surveys/{draft['id']}", params={"key": key}).status_code == 404
    for missing in ("999999", "abc"):
        assert visitor.get(f"/i/feedback/surveys/{missing}", params={"key": key}).status_code == 404


def test_an_edited_survey_keeps_serving_its_published_revision(
    owner: httpx.Client, visitor: httpx.Client, published: dict[str, Any]
) -> None:
    survey = publish(owner, create_survey(owner, published["site"]["id"])["id"])
    owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"name": "Changed in the draft"})
    shown = visitor.get(
        f"/i/feedback/surveys/{survey['id']}", params={"key": published["site"]["key"]}
    ).json()
    assert (shown["revision"], shown["name"]) == (1, "Product feedback")


def test_another_sites_key_or_origin_gets_nothing(
    owner: httpx.Client, console_server: LiveServer, published: dict[str, Any]
) -> None:
    other_site = create_site(owner, "other.example.com")
    survey_id = published["survey"]["id"]
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, headers={"Origin": "https://other.example.com"}
    ) as other:
        wrong_key = other.get(f"/i/feedback/surveys/{survey_id}", params={"key": other_site["key"]})
        assert wrong_key.status_code == 404
        assert wrong_key.json()["error"]["code"] == "unknown_survey"
        wrong_origin = other.get(f"/i/feedback/surveys/{survey_id}", params={"key": published["site"]["key"]})
        assert wrong_origin.status_code == 403
        assert wrong_origin.json()["error"]["code"] == "origin_not_allowed"
        assert "access-control-allow-origin" not in wrong_origin.headers
        unknown = other.get(f"/i/feedback/surveys/{survey_id}", params={"key": "nope"})
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "unknown_site"


def test_a_response_is_stored_once_however_often_it_is_sent(
    owner: httpx.Client, visitor: httpx.Client, published: dict[str, Any]
) -> None:
    survey_id = published["survey"]["id"]
    before = responses_of(owner, survey_id)
    body = answer_body(published)
    first = post(visitor, body)
    assert first.status_code == 202, first.text
    assert first.json() == {"response_id": body["response_id"], "stored": True}
    assert first.headers["access-control-allow-origin"] == ORIGIN
    again = post(visitor, body)
    assert again.status_code == 202
    assert again.json()["stored"] is False
    assert responses_of(owner, survey_id) == before + 1


def test_json_content_type_and_unknown_top_level_fields_are_accepted(
    owner: httpx.Client, visitor: httpx.Client, published: dict[str, Any]
) -> None:
    body = answer_body(published, sdk_version="9.9")
    response = visitor.post("/i/feedback/responses", json=body)
    assert response.status_code == 202, response.text


def test_optional_questions_may_be_left_out(visitor: httpx.Client, published: dict[str, Any]) -> None:
    response = post(visitor, answer_body(published, answers={"plan": "free", "comment": "  ", "liked": []}))
    assert response.status_code == 202, response.text


INVALID: list[tuple[dict[str, Any], str, str]] = [
    ({"answers": {"plan": "pro", "mood": 3}}, "answers.mood", "unknown_question"),
    ({"answers": {"plan": "enterprise"}}, "answers.plan", "unknown_option"),
    ({"answers": {"plan": "pro", "liked": ["speed", "colour"]}}, "answers.liked.1", "unknown_option"),
    ({"answers": {"plan": "pro", "liked": ["speed", "speed"]}}, "answers.liked", "invalid_field"),
    ({"answers": {"plan": "pro", "liked": "speed"}}, "answers.liked", "invalid_field"),
    ({"answers": {"plan": "pro", "score": 11}}, "answers.score", "rating_out_of_scale"),
    ({"answers": {"plan": "pro", "score": -1}}, "answers.score", "rating_out_of_scale"),
    ({"answers": {"plan": "pro", "score": 4.5}}, "answers.score", "rating_out_of_scale"),
    ({"answers": {"plan": "pro", "score": True}}, "answers.score", "rating_out_of_scale"),
    ({"answers": {"plan": "pro", "comment": "x" * 501}}, "answers.comment", "text_too_long"),
    ({"answers": {"plan": "pro", "comment": "a\u0000b"}}, "answers.comment", "invalid_field"),
    ({"answers": {"score": 3}}, "answers.plan", "answer_required"),
    ({"answers": []}, "answers", "invalid_field"),
    ({"revision": 2}, "revision", "unknown_revision"),
    ({"revision": "1"}, "revision", "invalid_field"),
    ({"survey_id": "x"}, "survey_id", "invalid_field"),
    ({"response_id": "short"}, "response_id", "invalid_field"),
    ({"visitor_id": ""}, "visitor_id", "invalid_field"),
    ({"visitor_id": "v" * 201}, "visitor_id", "invalid_field"),
    ({"page_path": "app"}, "page_path", "invalid_field"),
    ({"page_path": "/a\u0000"}, "page_path", "invalid_field"),
    ({"key": 5}, "key", "invalid_field"),
]


@pytest.mark.parametrize(("changes", "field", "code"), INVALID)
def test_invalid_responses_are_refused_naming_the_field_and_nothing_is_stored(
    owner: httpx.Client,
    visitor: httpx.Client,
    published: dict[str, Any],
    changes: dict[str, Any],
    field: str,
    code: str,
) -> None:
    survey_id = published["survey"]["id"]
    before = responses_of(owner, survey_id)
    response = post(visitor, answer_body(published, **changes))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert response.json()["error"]["code"] == code
    assert responses_of(owner, survey_id) == before


def test_malformed_and_oversized_bodies_are_refused(visitor: httpx.Client, published: dict[str, Any]) -> None:
    malformed = visitor.post(
        "/i/feedback/responses", content=b"{not json", headers={"Content-Type": "text/plain"}
    )
    assert malformed.status_code == 400
    assert malformed.json()["error"]["code"] == "malformed_json"
    assert malformed.headers["access-control-allow-origin"] == ORIGIN
    huge = post(visitor, answer_body(published, padding="x" * 300_000))
    assert huge.status_code == 413
    assert huge.json()["error"]["code"] == "body_too_large"


def test_responses_to_another_sites_survey_or_from_another_origin_are_refused(
    owner: httpx.Client, console_server: LiveServer, published: dict[str, Any]
) -> None:
    other_site = create_site(owner, "elsewhere.example.com")
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, headers={"Origin": "https://elsewhere.example.com"}
    ) as c:
        assert post(c, answer_body(published, key=other_site["key"])).status_code == 404
        assert post(c, answer_body(published)).status_code == 403


def test_archived_surveys_take_no_responses(
    owner: httpx.Client, visitor: httpx.Client, published: dict[str, Any]
) -> None:
    survey = publish(owner, create_survey(owner, published["site"]["id"])["id"])
    owner.post(f"/api/feedback/surveys/{survey['id']}/archive", json={})
    response = post(visitor, answer_body(published, survey_id=survey["id"]))
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "survey_archived"


def test_a_response_to_an_older_published_revision_is_kept(
    owner: httpx.Client, visitor: httpx.Client, published: dict[str, Any]
) -> None:
    survey = publish(owner, create_survey(owner, published["site"]["id"])["id"])
    owner.patch(f"/api/feedback/surveys/{survey['id']}", json={"name": "Second"})
    publish(owner, survey["id"])
    response = post(visitor, answer_body(published, survey_id=survey["id"], revision=1))
    assert response.status_code == 202
    counts = owner.get(f"/api/feedback/surveys/{survey['id']}").json()["revisions"]
    assert counts == [
        {"revision": 1, "published_at": counts[0]["published_at"], "responses": 1},
        {"revision": 2, "published_at": counts[1]["published_at"], "responses": 0},
    ]


def test_collection_switched_off_refuses_responses(owner: httpx.Client, console_server: LiveServer) -> None:
    site = create_site(owner, "paused.example.com")
    survey = publish(owner, create_survey(owner, site["id"])["id"])
    owner.patch(f"/api/sites/{site['id']}", json={"collection_enabled": False})
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, headers={"Origin": "https://paused.example.com"}
    ) as c:
        shown = c.get(f"/i/feedback/surveys/{survey['id']}", params={"key": site["key"]})
        assert shown.status_code == 403
        assert shown.json()["error"]["code"] == "collection_disabled"
        body = answer_body({"site": site, "survey": survey})
        assert post(c, body).status_code == 403


def test_the_preflight_allows_the_sites_origin_only(visitor: httpx.Client, published: dict[str, Any]) -> None:
    key = published["site"]["key"]
    allowed = visitor.options(
        "/i/feedback/responses",
        params={"key": key},
        headers={"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"},
    )
    assert allowed.status_code == 204
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    refused = visitor.options(
        "/i/feedback/responses", params={"key": key}, headers={"Origin": "https://evil.test"}
    )
    assert refused.status_code == 403


def test_the_config_lists_the_published_surveys_that_open_by_themselves(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site = create_site(owner)
    origin = f"https://{site['domain']}"
    for bad in ({"delay_seconds": -1}, {"delay_seconds": 601}, {"delay_seconds": "5"}, {"after": 5}, 5):
        refused = owner.post("/api/feedback/surveys", json=survey_body(site["id"], auto_open=bad))
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["field"].startswith("auto_open")
    manual = publish(owner, create_survey(owner, site["id"])["id"])
    auto = create_survey(owner, site["id"], auto_open={"delay_seconds": 3})
    assert auto["auto_open"] == {"delay_seconds": 3}
    assert manual["auto_open"] is None
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, headers={"Origin": origin}, timeout=30
    ) as page:
        config = page.get("/i/config", params={"key": site["key"]}).json()
        assert config["surveys"] == []  # a draft does not open
        publish(owner, auto["id"])
        config = _config_after_cache(page, site["key"])
        assert config["surveys"] == [{"id": auto["id"], "delay_seconds": 3}]
        owner.post(f"/api/feedback/surveys/{auto['id']}/archive", json={})
        assert _config_after_cache(page, site["key"])["surveys"] == []


def _config_after_cache(page: httpx.Client, key: str) -> dict[str, Any]:
    """The config once the server's 10-second memory of the site's auto-open surveys has passed."""
    time.sleep(10.2)
    config: dict[str, Any] = page.get("/i/config", params={"key": key}).json()
    return config
