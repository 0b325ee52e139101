"""The responses summary: figures per question of one revision, checked against the seeded answers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from sightline.database import Database
from tests.conftest import sign_in
from tests.support.server import LiveServer, create_owner
from tests.surveys.helpers import create_site, create_survey, publish, seed_responses

ANSWERS: list[dict[str, Any]] = [
    {"score": 9, "plan": "pro", "liked": ["speed", "docs"], "comment": "Fast"},
    {"score": 10, "plan": "pro", "liked": ["docs"], "comment": "Great docs"},
    {"score": 3, "plan": "free", "liked": [], "comment": None},
    {"score": None, "plan": "free", "liked": ["speed"], "comment": "Cheaper please"},
]


def summary_of(owner: httpx.Client, survey_id: int, revision: str | None = None) -> httpx.Response:
    params = {} if revision is None else {"revision": revision}
    return owner.get(f"/api/feedback/surveys/{survey_id}/summary", params=params)


def seeded_survey(owner: httpx.Client, db: Database) -> tuple[int, int]:
    site = create_site(owner)
    survey = publish(owner, create_survey(owner, site["id"])["id"])
    seed_responses(db, site["id"], survey["id"], 1, ANSWERS)
    return site["id"], survey["id"]


def test_summary_counts_ratings_choices_and_lists_the_latest_texts(
    owner: httpx.Client, server_db: Database
) -> None:
    _, survey_id = seeded_survey(owner, server_db)
    response = summary_of(owner, survey_id)
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["revision"], body["responses"], body["summarized"]) == (1, 4, 4)
    score, plan, liked, comment = body["questions"]
    assert score["scale"] == "0-10"
    assert score["answered"] == 3
    counts = {row["value"]: row["count"] for row in score["distribution"]}
    assert list(counts) == list(range(11))
    assert (counts[9], counts[10], counts[3], counts[0]) == (1, 1, 1, 0)
    assert score["average"] == pytest.approx(22 / 3, abs=0.01)
    assert [(o["label"], o["count"]) for o in plan["options"]] == [("Free", 2), ("Pro", 2)]
    assert [(o["id"], o["count"]) for o in liked["options"]] == [("speed", 2), ("price", 0), ("docs", 2)]
    assert liked["answered"] == 3
    assert [t["text"] for t in comment["latest"]] == ["Cheaper please", "Great docs", "Fast"]
    assert comment["answered"] == 3


def test_summary_of_each_revision_uses_that_revisions_questions(
    owner: httpx.Client, server_db: Database
) -> None:
    site_id, survey_id = seeded_survey(owner, server_db)
    changed = owner.patch(
        f"/api/feedback/surveys/{survey_id}",
        json={"questions": [{"id": "mood", "type": "rating", "title": "Your mood?"}]},
    )
    assert changed.status_code == 200, changed.text
    publish(owner, survey_id)
    seed_responses(server_db, site_id, survey_id, 2, [{"mood": 5}, {"mood": 4}])
    second = summary_of(owner, survey_id, "2").json()
    assert [q["id"] for q in second["questions"]] == ["mood"]
    assert second["questions"][0]["average"] == 4.5
    assert summary_of(owner, survey_id).json()["revision"] == 2
    first = summary_of(owner, survey_id, "1").json()
    assert first["responses"] == 4
    assert len(first["questions"]) == 4


def test_summary_of_a_revision_without_responses_is_empty(owner: httpx.Client) -> None:
    site = create_site(owner)
    survey = publish(owner, create_survey(owner, site["id"])["id"])
    body = summary_of(owner, survey["id"]).json()
    assert (body["responses"], body["last_submitted_at"]) == (0, None)
    assert body["questions"][0]["average"] is None


@pytest.mark.parametrize(
    ("revision", "status", "code"),
    [("abc", 422, "invalid_revision"), ("0", 422, "invalid_revision"), ("7", 404, "unknown_revision")],
)
def test_summary_refuses_malformed_or_unknown_revisions(
    owner: httpx.Client, revision: str, status: int, code: str
) -> None:
    site = create_site(owner)
    survey = publish(owner, create_survey(owner, site["id"])["id"])
    response = summary_of(owner, survey["id"], revision)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_summary_of_a_draft_or_another_owners_survey_is_not_found(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    site = create_site(owner)
    draft = create_survey(owner, site["id"])
    never_published = summary_of(owner, draft["id"])
    assert never_published.status_code == 404
    assert never_published.json()["error"]["code"] == "unknown_revision"
    published = publish(owner, draft["id"])
    create_owner(console_server, "summary-other@example.com", "another long password here")
    other = sign_in(console_server, "summary-other@example.com", "another long password here")
    try:
        response = summary_of(other, published["id"])
    finally:
        other.close()
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert summary_of(owner, published["id"]).status_code == 200
