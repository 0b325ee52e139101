"""An acknowledged response survives the server being killed right after it answered."""

from __future__ import annotations

import uuid

import httpx

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.support.http import TLS
from tests.support.server import create_owner
from tests.surveys.helpers import create_site, create_survey, publish


def test_an_acknowledged_response_survives_a_killed_server(
    start_server: StartServer, database_url: str
) -> None:
    server = start_server(database_url)
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        site = create_site(owner, "shop.example.com")
        survey = publish(owner, create_survey(owner, site["id"])["id"])
    finally:
        owner.close()
    response_ids = [uuid.uuid4().hex for _ in range(5)]
    with httpx.Client(
        verify=TLS, base_url=server.base_url, headers={"Origin": "https://shop.example.com"}
    ) as visitor:
        for response_id in response_ids:
            body = {
                "key": site["key"],
                "survey_id": survey["id"],
                "revision": 1,
                "response_id": response_id,
                "visitor_id": "v-1",
                "page_path": "/app/",
                "answers": {"plan": "pro"},
            }
            assert visitor.post("/i/feedback/responses", json=body).status_code == 202
    server.kill()

    restarted = start_server(database_url)
    owner = sign_in(restarted)
    try:
        export = owner.get(f"/api/feedback/surveys/{survey['id']}/export")
        assert export.status_code == 200
        assert len(export.text.strip().split("\r\n")) == 1 + len(response_ids)
    finally:
        owner.close()
