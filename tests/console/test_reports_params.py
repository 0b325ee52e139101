"""The reports API's query parameters as the OpenAPI document names them, and which error a request
with several faults gets (on a real server: SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.routes import document_app

FILTERS = [
    "source", "channel", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device",
    "country", "region", "city", "language", "entry_page", "exit_page", "page", "event", "goal", "prop",
]  # fmt: skip
PERIOD = ["range", "from", "to", "compare", "imported", *FILTERS]
DOCUMENTED = {
    "summary": PERIOD,
    "timeseries": PERIOD,
    "breakdown": [
        "dimension",
        "limit",
        "offset",
        "search",
        "name",
        "viewport",
        *PERIOD[:3],
        "imported",
        *FILTERS,
    ],
    "heatmap": ["path", "viewport", "range", "from", "to", *FILTERS],
    "realtime": [],
}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    document: dict[str, Any] = document_app("sightline-openapi-").openapi()
    return document


@pytest.mark.parametrize(("report", "names"), DOCUMENTED.items())
def test_each_report_documents_the_site_id_and_its_optional_query_parameters_in_order(
    document: dict[str, Any], report: str, names: list[str]
) -> None:
    operation = document["paths"][f"/api/sites/{{site_id}}/reports/{report}"]["get"]
    parameters = operation["parameters"]
    assert [(p["name"], p["in"]) for p in parameters] == [("site_id", "path")] + [(n, "query") for n in names]
    assert parameters[0]["required"] is True
    assert parameters[0]["schema"]["minimum"] == 1
    for parameter in parameters[1:]:
        assert parameter["required"] is False
        assert parameter["description"], parameter["name"]
    assert set(operation["responses"]) >= {"200", "404", "422"}


@pytest.mark.parametrize(
    "report", ["summary?range=week", "breakdown?dimension=cities", "realtime?colour=blue"]
)
@pytest.mark.parametrize("site", ["0", "abc", "99999999999999999999"])
def test_a_bad_site_id_is_not_found_before_the_query_is_read(
    owner: httpx.Client, report: str, site: str
) -> None:
    response = owner.get(f"/api/sites/{site}/reports/{report}")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "Nothing with that id exists."}}


def test_the_first_bad_parameter_in_the_address_is_the_one_named(owner: httpx.Client) -> None:
    site = owner.post("/api/sites", json={"name": "Params", "domain": "reports-params.example.com"})
    assert site.status_code == 201
    response = owner.get(f"/api/sites/{site.json()['id']}/reports/summary?colour=blue&range=week")
    assert response.status_code == 422
    assert response.json() == {
        "error": {
            "code": "invalid_parameter",
            "message": "The parameter 'colour' is not known here.",
            "field": "colour",
        }
    }
    response = owner.get(f"/api/sites/{site.json()['id']}/reports/breakdown?dimension=pages&compare=true")
    assert response.status_code == 200, "the breakdown accepts the comparison flag the other reports take"
