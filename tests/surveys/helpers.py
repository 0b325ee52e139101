"""Shared helpers of the survey tests: sites, survey bodies and seeded responses."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

import httpx

from sightline.database import Database
from sightline.surveys.responses import Submission, store_responses

QUESTIONS: list[dict[str, Any]] = [
    {"id": "score", "type": "rating", "title": "How likely are you to recommend us?", "scale": "0-10"},
    {
        "id": "plan",
        "type": "single_choice",
        "title": "Which plan do you use?",
        "required": True,
        "options": [{"id": "free", "label": "Free"}, {"id": "pro", "label": "Pro"}],
    },
    {
        "id": "liked",
        "type": "multiple_choice",
        "title": "What do you like?",
        "options": [
            {"id": "speed", "label": "Speed"},
            {"id": "price", "label": "Price"},
            {"id": "docs", "label": "Docs"},
        ],
    },
    {"id": "comment", "type": "text", "title": "Anything else?", "max_length": 500},
]


def create_site(client: httpx.Client, domain: str | None = None) -> dict[str, Any]:
    domain = domain or f"s{uuid.uuid4().hex[:10]}.example.com"
    response = client.post("/api/sites", json={"name": "Shop", "domain": domain})
    assert response.status_code == 201, response.text
    site: dict[str, Any] = response.json()
    return site


def survey_body(site_id: int, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "site_id": site_id,
        "name": "Product feedback",
        "questions": QUESTIONS,
        "targeting": {"include": [{"match": "prefix", "path": "/app/"}], "exclude": []},
    }
    body.update(changes)
    return body


def create_survey(client: httpx.Client, site_id: int, **changes: Any) -> dict[str, Any]:
    response = client.post("/api/feedback/surveys", json=survey_body(site_id, **changes))
    assert response.status_code == 201, response.text
    survey: dict[str, Any] = response.json()
    return survey


def publish(client: httpx.Client, survey_id: int) -> dict[str, Any]:
    response = client.post(f"/api/feedback/surveys/{survey_id}/publish", json={})
    assert response.status_code == 200, response.text
    survey: dict[str, Any] = response.json()
    return survey


def seed_responses(
    db: Database,
    site_id: int,
    survey_id: int,
    revision: int,
    answers: Iterable[dict[str, Any]],
    visitors: list[str] | None = None,
) -> int:
    """Store responses through the feature module in one transaction, as the ingest path would."""
    batch = [
        Submission(
            survey_id=survey_id,
            revision=revision,
            response_id=f"seed-{uuid.uuid4().hex}",
            visitor_id=visitors[index] if visitors else f"visitor-{index}",
            page_path=f"/app/page/{index}",
            answers=answer,
        )
        for index, answer in enumerate(answers)
    ]
    with db.begin() as conn:
        return store_responses(conn, site_id, survey_id, batch)
