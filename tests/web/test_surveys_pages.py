"""The surveys pages in a real browser: build, preview, field errors, publish, revisions, the
responses summary, export batches, and the main navigation on a phone."""

from __future__ import annotations

import csv
import io
import re
import uuid
from typing import Any

import httpx
import orjson
from playwright.sync_api import Locator, Page, expect

from sightline.database import open_database
from tests.support.server import LiveServer
from tests.surveys.helpers import QUESTIONS, seed_responses
from tests.web.conftest import PHONE, Console, unique

SURVEY_URL = re.compile(r".*/surveys/(\d+)(\?.*)?$")


def create_site(console: Console, page: Page) -> dict[str, Any]:
    site = console.api(
        page, "POST", "/api/sites", {"name": "Survey shop", "domain": unique("sv") + ".example.com"}
    )
    assert isinstance(site, dict)
    return site


def question(page: Page, number: int) -> Locator:
    return page.locator(f"#sv-questions-{number - 1}")


def preview(page: Page) -> Locator:
    return page.get_by_role("figure", name=re.compile("^Preview"))


def test_a_survey_with_each_question_type_is_built_corrected_published_and_edited_into_draft_2(
    console: Console,
) -> None:
    page = console.signed_in()
    site = create_site(console, page)
    page.goto(f"/sites/{site['id']}")
    links = page.get_by_role("navigation", name="This site's data")
    expect(links.get_by_role("link", name="Reports")).to_have_attribute(
        "href", f"/sites/{site['id']}/reports"
    )
    expect(links.get_by_role("link", name="Recordings")).to_have_attribute(
        "href", f"/recordings?site={site['id']}"
    )
    links.get_by_role("link", name="Surveys").click()
    expect(page.get_by_role("heading", level=1, name="Surveys")).to_be_visible()
    expect(page.get_by_text("No surveys yet.")).to_be_visible()
    page.get_by_role("link", name="New survey").click()
    expect(page.get_by_role("heading", level=1, name="New survey")).to_be_visible()

    page.get_by_label("Name", exact=True).fill("Checkout feedback")
    expect(preview(page)).to_contain_text("Checkout feedback")
    first = question(page, 1)
    first.get_by_label("Question", exact=True).fill("How easy was checkout?")
    first.get_by_label("Scale").select_option("0-10")
    first.get_by_label("Required").check()
    expect(preview(page).get_by_role("radio")).to_have_count(11)
    expect(preview(page)).to_contain_text("How easy was checkout? *")

    page.get_by_role("button", name="Add question").click()
    second = question(page, 2)
    second.get_by_label("Type").select_option("single_choice")
    second.get_by_label("Question", exact=True).fill("Which plan?")
    second.get_by_label("Option 1", exact=True).fill("Pro")
    second.get_by_label("Option 2", exact=True).fill("Pro")
    page.get_by_role("button", name="Add question").click()
    third = question(page, 3)
    third.get_by_label("Type").select_option("multiple_choice")
    third.get_by_label("Question", exact=True).fill("What did you like?")
    third.get_by_role("button", name="Add option").click()
    for number, label in enumerate(["Speed", "Price", "Design"], start=1):
        third.get_by_label(f"Option {number}", exact=True).fill(label)
    page.get_by_role("button", name="Add question").click()
    fourth = question(page, 4)
    fourth.get_by_label("Type").select_option("text")
    fourth.get_by_label("Question", exact=True).fill("Anything else?")
    page.get_by_role("button", name="Add a page rule").click()
    page.get_by_label("Show on 1: path").fill("/checkout/")
    page.get_by_role("button", name="Add an exclusion").click()
    page.get_by_label("Never show on 1: match").select_option("glob")
    page.get_by_label("Never show on 1: path").fill("/checkout/*/admin")
    expect(preview(page).get_by_role("checkbox")).to_have_count(3)
    expect(preview(page).locator("textarea")).to_have_count(1)

    page.get_by_role("button", name="Save draft").click()
    duplicate = page.locator("#sv-questions-1-options-1-label")
    expect(duplicate).to_have_attribute("aria-invalid", "true")
    expect(duplicate).to_be_focused()
    expect(page.locator("#sv-questions-1-options-1-label-error")).to_have_text(
        "The option label 'Pro' is used twice."
    )
    console.shoot(page, "survey-field-error")

    duplicate.fill("Free")
    # Reorder: the text question moves up above the multiple choice one.
    fourth.get_by_role("button", name="Move question 4 up").click()
    expect(question(page, 3).get_by_label("Question", exact=True)).to_have_value("Anything else?")
    expect(preview(page).locator("legend").nth(2)).to_have_text("Anything else?")
    page.get_by_role("button", name="Publish").click()
    expect(page).to_have_url(SURVEY_URL)
    survey_id = int(SURVEY_URL.match(page.url).group(1))  # type: ignore[union-attr]
    expect(page.get_by_role("heading", level=1, name="Checkout feedback")).to_be_visible()
    expect(page.locator(".page-subtitle")).to_contain_text("Published")
    expect(page.locator(".page-subtitle")).to_contain_text("Revision 1 live")
    console.shoot(page, "survey-builder")

    saved = console.api(page, "GET", f"/api/feedback/surveys/{survey_id}")
    assert isinstance(saved, dict)
    assert [q["type"] for q in saved["questions"]] == ["rating", "single_choice", "text", "multiple_choice"]
    assert saved["questions"][0]["scale"] == "0-10"
    assert saved["questions"][0]["required"] is True
    assert [o["label"] for o in saved["questions"][3]["options"]] == ["Speed", "Price", "Design"]
    assert saved["targeting"] == {
        "include": [{"match": "prefix", "path": "/checkout/"}],
        "exclude": [{"match": "glob", "path": "/checkout/*/admin"}],
    }

    page.get_by_role("link", name="All surveys").click()
    row = page.locator(f"tr[data-survey='{survey_id}']")
    expect(row).to_contain_text("Checkout feedback")
    expect(row).to_contain_text("Published")
    expect(row).to_contain_text("Revision 1 live")

    row.get_by_role("link", name="Checkout feedback", exact=True).click()
    question(page, 2).get_by_role("button", name="Remove question 2").click()
    page.get_by_label("Name", exact=True).fill("Checkout feedback v2")
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_role("status").filter(has_text="Draft saved")).to_be_visible()
    expect(page.locator(".page-subtitle")).to_contain_text("Revision 1 live · draft 2 pending")
    revisions = page.get_by_role("region", name="Revisions")
    expect(revisions.locator("[data-revision='1']")).to_contain_text("Live")
    expect(revisions.locator("[data-revision='2']")).to_contain_text("Draft")
    revisions.get_by_role("button", name="View revision 1").click()
    expect(revisions.get_by_role("figure")).to_contain_text("Which plan?")
    console.shoot(page, "survey-revisions")

    page.get_by_role("link", name="All surveys").click()
    expect(page.locator(f"tr[data-survey='{survey_id}']")).to_contain_text(
        "Revision 1 live · draft 2 pending"
    )
    console.shoot(page, "surveys-list")


def post_response(server: LiveServer, site: dict[str, Any], survey_id: int, answers: dict[str, Any]) -> None:
    response = httpx.post(
        f"{server.base_url}/i/feedback/responses",
        content=orjson.dumps(
            {
                "key": site["key"],
                "survey_id": survey_id,
                "revision": 1,
                "response_id": uuid.uuid4().hex,
                "visitor_id": f"v-{uuid.uuid4().hex[:6]}",
                "page_path": "/app/cart",
                "answers": answers,
            }
        ),
        headers={"Content-Type": "text/plain;charset=UTF-8", "Origin": f"https://{site['domain']}"},
        timeout=30,
    )
    assert response.status_code == 202, response.text


def download_csv(page: Page, name: str) -> list[list[str]]:
    with page.expect_download() as info:
        page.get_by_role("link", name=name).click()
    path = info.value.path()
    return list(csv.reader(io.StringIO(path.read_text("utf-8"), newline="")))


def test_the_summary_shows_the_responses_and_the_export_downloads_batch_by_batch(
    console: Console, console_server: LiveServer
) -> None:
    page = console.signed_in()
    site = create_site(console, page)
    body = {"site_id": site["id"], "name": "Product feedback", "questions": QUESTIONS}
    created = console.api(page, "POST", "/api/feedback/surveys", body)
    assert isinstance(created, dict)
    survey_id = created["id"]
    console.api(page, "POST", f"/api/feedback/surveys/{survey_id}/publish", {})
    post_response(
        console_server, site, survey_id, {"score": 9, "plan": "pro", "liked": ["speed"], "comment": "Fast"}
    )
    post_response(console_server, site, survey_id, {"score": 6, "plan": "free", "liked": ["speed", "docs"]})
    post_response(console_server, site, survey_id, {"plan": "pro", "comment": "=SUM(A1)"})

    page.goto("/surveys")
    page.get_by_label("Site", exact=True).select_option(str(site["id"]))
    page.get_by_role("link", name="3 responses to Product feedback").click()
    expect(page.get_by_role("heading", level=1, name="Responses: Product feedback")).to_be_visible()
    score = page.locator("[data-question='score']")
    expect(score).to_contain_text("2 answered")
    expect(score.locator(".sv-average")).to_have_text("Average 7.5")
    plan = page.locator("[data-question='plan']")
    expect(plan.get_by_role("row", name=re.compile("^Pro"))).to_contain_text("2 (67%)")
    # Each bar draws its answer's share of the responses: Pro two thirds, Free one third.
    for answer, share in (("Pro", 2 / 3), ("Free", 1 / 3)):
        bar = plan.get_by_role("row", name=re.compile(f"^{answer}")).locator("meter")
        assert abs(bar.evaluate("(m) => m.value / m.max") - share) < 0.01, answer
    liked = page.locator("[data-question='liked']")
    expect(liked.get_by_role("row", name=re.compile("^Speed"))).to_contain_text("2")
    latest = page.get_by_role("list", name="Latest answers to Anything else?").get_by_role("listitem")
    expect(latest).to_have_count(2)
    expect(latest.first).to_contain_text("=SUM(A1)")
    console.shoot(page, "survey-responses")

    rows = download_csv(page, "Download CSV")
    assert rows[0][:5] == ["response_id", "submitted_at", "revision", "visitor_id", "page_path"]
    assert rows[0][5:] == [q["title"] for q in QUESTIONS]
    assert [row[6] for row in rows[1:]] == ["Pro", "Free", "Pro"]
    assert rows[3][8] == "'=SUM(A1)"
    expect(page.get_by_role("button", name="Next batch")).to_have_count(0)

    # 1000 more responses: the first batch is full, so the export links to the next one.
    db = open_database(
        console_server.database_url or f"sqlite:///{console_server.data_dir / 'sightline.db'}", migrate=False
    )
    try:
        seed_responses(db, site["id"], survey_id, 1, [{"plan": "free"}] * 1000)
    finally:
        db.dispose()
    page.reload()
    page.get_by_role("button", name="Next batch").click()
    expect(page.locator(".sv-batch")).to_have_text("Batch of responses 1,001 to 1,003.")
    second = download_csv(page, "Download CSV from response 1,001")
    assert len(second) == 4
    assert [row[6] for row in second[1:]] == ["Free", "Free", "Free"]
    first_ids = {row[0] for row in rows[1:]}
    assert not first_ids & {row[0] for row in second[1:]}
    expect(page.get_by_role("button", name="Next batch")).to_have_count(0)
    page.get_by_role("button", name="Previous batch").click()
    expect(page.locator(".sv-batch")).to_have_text("Batch of responses 1 to 1,000.")
    console.shoot(page, "survey-export")


def test_the_main_navigation_fits_a_phone_and_works_by_keyboard(console: Console) -> None:
    first = console.signed_in(viewport=PHONE)
    site = create_site(console, first)
    body = {"site_id": site["id"], "name": "Phone survey", "questions": QUESTIONS}
    console.api(first, "POST", "/api/feedback/surveys", body)
    for width in (360, 375):
        page = console.signed_in(viewport={**PHONE, "width": width})
        page.goto(f"/surveys?site={site['id']}")
        expect(page.get_by_role("link", name="Phone survey")).to_be_visible()
        expect(page.get_by_role("heading", level=1, name="Surveys")).to_be_visible()
        nav = page.get_by_role("navigation", name="Main")
        links = nav.get_by_role("link")
        expect(links).to_have_count(6)  # Sites, Recordings, Reports, Surveys, Team, Health
        for index in range(6):
            box = links.nth(index).bounding_box()
            assert box is not None
            assert box["x"] >= 0
            assert box["x"] + box["width"] <= width
        overflow = page.evaluate(
            "() => [document.documentElement.scrollWidth - document.documentElement.clientWidth,"
            " document.querySelector('nav.nav').scrollWidth - document.querySelector('nav.nav').clientWidth]"
        )
        assert overflow == [0, 0]
        if width == 375:
            console.shoot(page, "nav-phone")
        nav.get_by_role("link", name="Health").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", level=1, name="Health")).to_be_visible()
        nav.get_by_role("link", name="Surveys").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", level=1, name="Surveys")).to_be_visible()


def test_the_builder_and_responses_pages_fit_a_phone_in_the_dark_theme(console: Console) -> None:
    page = console.signed_in(viewport=PHONE, scheme="dark")
    site = create_site(console, page)
    body = {"site_id": site["id"], "name": "Phone survey", "questions": QUESTIONS}
    created = console.api(page, "POST", "/api/feedback/surveys", body)
    assert isinstance(created, dict)
    console.api(page, "POST", f"/api/feedback/surveys/{created['id']}/publish", {})
    wide = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    page.goto(f"/surveys/{created['id']}")
    expect(preview(page)).to_contain_text("Which plan do you use?")
    assert page.evaluate(wide) == 0
    console.shoot(page, "survey-builder-phone-dark")
    page.goto(f"/surveys/{created['id']}/responses")
    expect(page.get_by_role("heading", level=2, name="Summary of revision 1")).to_be_visible()
    assert page.evaluate(wide) == 0
    console.shoot(page, "survey-responses-phone-dark")


def test_a_published_survey_without_responses_says_so_once_and_offers_no_empty_download(
    console: Console,
) -> None:
    page = console.signed_in()
    site = create_site(console, page)
    body = {"site_id": site["id"], "name": "Quiet survey", "questions": QUESTIONS}
    created = console.api(page, "POST", "/api/feedback/surveys", body)
    assert isinstance(created, dict)
    console.api(page, "POST", f"/api/feedback/surveys/{created['id']}/publish", {})
    page.goto(f"/surveys/{created['id']}/responses")
    expect(page.get_by_role("heading", level=2, name="Summary of revision 1")).to_be_visible()
    expect(page.get_by_text("No visitor has answered revision 1 yet.")).to_have_count(1)
    expect(page.locator(".sv-summary-grid")).to_have_count(0)
    expect(page.locator(".sv-batch")).to_have_text(
        "No responses to revision 1 yet: its CSV can be downloaded once the first arrives."
    )
    expect(page.get_by_role("link", name=re.compile("Download CSV"))).to_have_count(0)


def test_saving_a_new_survey_moves_the_builder_to_its_own_address_which_a_reload_keeps(
    console: Console,
) -> None:
    page = console.signed_in()
    site = create_site(console, page)
    page.goto(f"/surveys/new?site={site['id']}")
    page.get_by_label("Name", exact=True).fill("Kept survey")
    question(page, 1).get_by_label("Question", exact=True).fill("How was it?")
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_text("Draft saved.")).to_be_visible()
    expect(page).to_have_url(re.compile(r".*/surveys/\d+$"))
    page.reload()
    expect(page.get_by_role("heading", level=1, name="Kept survey")).to_be_visible()
    expect(page.get_by_label("Name", exact=True)).to_have_value("Kept survey")
