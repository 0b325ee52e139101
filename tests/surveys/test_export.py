"""CSV export: batches of at most 1000 responses of one revision, read back with the csv module."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import httpx
import pytest

from sightline.database import Database
from sightline.surveys.export import escape_cell
from tests.support.server import LiveServer
from tests.surveys.helpers import create_site, create_survey, publish, seed_responses

FIXED = ["response_id", "submitted_at", "revision", "visitor_id", "page_path"]
TITLES = [
    "How likely are you to recommend us?",
    "Which plan do you use?",
    "What do you like?",
    "Anything else?",
]


def read_csv(response: httpx.Response) -> list[list[str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    return list(csv.reader(io.StringIO(response.content.decode("utf-8"), newline="")))


def next_link(response: httpx.Response) -> str | None:
    match = re.fullmatch(r'<([^>]+)>; rel="next"', response.headers.get("link", ""))
    return match.group(1) if match else None


def published_survey(owner: httpx.Client, **changes: Any) -> tuple[int, int]:
    site = create_site(owner)
    survey = publish(owner, create_survey(owner, site["id"], **changes)["id"])
    return site["id"], survey["id"]


def test_2500_responses_export_in_three_batches_without_overlap_or_gap(
    owner: httpx.Client, server_db: Database, console_server: LiveServer
) -> None:
    site_id, survey_id = published_survey(owner)
    answers = [
        {
            "score": i % 11,
            "plan": "pro" if i % 2 else "free",
            "liked": ["speed", "docs"],
            "comment": f"note {i}",
        }
        for i in range(2500)
    ]
    assert seed_responses(server_db, site_id, survey_id, 1, answers) == 2500

    url: str | None = f"/api/feedback/surveys/{survey_id}/export"
    batches: list[list[list[str]]] = []
    while url is not None:
        response = owner.get(url)
        rows = read_csv(response)
        assert rows[0] == FIXED + TITLES
        assert response.headers["content-disposition"].startswith("attachment; filename=")
        assert response.headers["content-disposition"].endswith('.csv"')
        batches.append(rows[1:])
        url = next_link(response)
        if url is not None:
            assert url.startswith(console_server.base_url)
    assert [len(batch) for batch in batches] == [1000, 1000, 500]
    ids = [int(row[0]) for batch in batches for row in batch]
    assert ids == sorted(ids)
    assert len(set(ids)) == 2500
    comments = [row[8] for batch in batches for row in batch]
    assert comments == [f"note {i}" for i in range(2500)]

    second = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"offset": 1000}))
    assert second[1:] == batches[1]
    shifted = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"offset": 1500}))
    assert shifted[1:] == batches[1][500:] + batches[2]


def test_a_row_holds_labels_for_choices_and_the_response_context(
    owner: httpx.Client, server_db: Database
) -> None:
    site_id, survey_id = published_survey(owner)
    seed_responses(
        server_db,
        site_id,
        survey_id,
        1,
        [{"score": 10, "plan": "pro", "liked": ["docs", "speed"]}, {"plan": "free"}],
    )
    rows = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"revision": 1}))
    first, second = rows[1], rows[2]
    assert first[2:5] == ["1", "visitor-0", "/app/page/0"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first[1])
    assert first[5:] == ["10", "Pro", "Speed; Docs", ""]
    assert second[5:] == ["", "Free", "", ""]


def test_cells_that_could_run_as_formulas_are_escaped(owner: httpx.Client, server_db: Database) -> None:
    questions = [{"id": "say", "type": "text", "title": '=HYPERLINK("http://evil")'}]
    site_id, survey_id = published_survey(owner, questions=questions)
    texts = ["=SUM(A1:A2)", "+1", "-2", "@cmd", "\ttab", 'safe, with "quotes"\nand a line break', "héllo ✓"]
    seed_responses(server_db, site_id, survey_id, 1, [{"say": text} for text in texts])
    rows = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export"))
    assert rows[0][-1] == '\'=HYPERLINK("http://evil")'
    assert [row[-1] for row in rows[1:]] == [
        "'=SUM(A1:A2)",
        "'+1",
        "'-2",
        "'@cmd",
        "tab",
        'safe, with "quotes"\nand a line break',
        "héllo ✓",
    ]


def test_visitor_codes_that_look_like_formulas_are_escaped(owner: httpx.Client, server_db: Database) -> None:
    site_id, survey_id = published_survey(owner)
    visitors = ["=1+1", "-5", "@me", "plain"]
    seed_responses(server_db, site_id, survey_id, 1, [{"plan": "pro"}] * 4, visitors=visitors)
    rows = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export"))
    assert [row[3] for row in rows[1:]] == ["'=1+1", "'-5", "'@me", "plain"]


@pytest.mark.parametrize(
    ("cell", "written"),
    [("\tx", "'\tx"), ("\rx", "'\rx"), ("\nx", "'\nx"), ("x=1", "x=1"), ("", ""), ("'=1", "'=1")],
)
def test_cells_starting_with_tab_or_line_breaks_are_escaped(cell: str, written: str) -> None:
    assert escape_cell(cell) == written


def test_each_revision_exports_its_own_columns(owner: httpx.Client, server_db: Database) -> None:
    site_id, survey_id = published_survey(owner)
    seed_responses(server_db, site_id, survey_id, 1, [{"plan": "pro"}] * 3)
    new_questions = [
        {
            "id": "plan",
            "type": "single_choice",
            "title": "Your plan",
            "required": True,
            "options": [
                {"id": "free", "label": "Free"},
                {"id": "pro", "label": "Pro"},
                {"id": "team", "label": "Team"},
            ],
        },
        {"id": "why", "type": "text", "title": "Why?"},
    ]
    owner.patch(f"/api/feedback/surveys/{survey_id}", json={"questions": new_questions})
    publish(owner, survey_id)
    seed_responses(server_db, site_id, survey_id, 2, [{"plan": "team", "why": "Seats"}] * 2)
    owner.patch(f"/api/feedback/surveys/{survey_id}", json={"name": "Third"})
    publish(owner, survey_id)

    first = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"revision": 1}))
    assert first[0] == FIXED + TITLES
    assert len(first) == 4
    second = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"revision": 2}))
    assert second[0] == [*FIXED, "Your plan", "Why?"]
    assert [row[2:] for row in second[1:]] == [
        ["2", "visitor-0", "/app/page/0", "Team", "Seats"],
        ["2", "visitor-1", "/app/page/1", "Team", "Seats"],
    ]
    default = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export"))
    assert default == second
    third = read_csv(owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"revision": 3}))
    assert len(third) == 1


@pytest.mark.parametrize("offset", ["-1", "abc", "100001", "1.5", "", "1e3", " 5"])
def test_export_rejects_offsets_outside_0_to_100000(owner: httpx.Client, offset: str) -> None:
    _, survey_id = published_survey(owner)
    response = owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"offset": offset})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "offset"


def test_export_at_offset_100000_is_allowed_and_past_the_end_is_empty(owner: httpx.Client) -> None:
    _, survey_id = published_survey(owner)
    response = owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"offset": 100000})
    assert read_csv(response) == [FIXED + TITLES]
    assert "link" not in response.headers


@pytest.mark.parametrize(
    ("revision", "status"), [("9", 404), ("2", 404), ("0", 422), ("abc", 422), ("-1", 422)]
)
def test_export_rejects_unknown_or_malformed_revisions(
    owner: httpx.Client, revision: str, status: int
) -> None:
    _, survey_id = published_survey(owner)
    owner.patch(f"/api/feedback/surveys/{survey_id}", json={"name": "Draft two"})
    response = owner.get(f"/api/feedback/surveys/{survey_id}/export", params={"revision": revision})
    assert response.status_code == status
    if status == 422:
        assert response.json()["error"]["field"] == "revision"
    else:
        assert response.json()["error"]["code"] == "unknown_revision"


def test_a_survey_never_published_has_nothing_to_export(owner: httpx.Client) -> None:
    survey = create_survey(owner, create_site(owner)["id"])
    response = owner.get(f"/api/feedback/surveys/{survey['id']}/export")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_revision"
