"""A survey's page says how to open it on the site (its id and the line to paste, copied with a
button), and link-buttons look like buttons."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import Console, unique


def test_the_survey_page_shows_the_line_that_opens_it_and_copies_it(console: Console) -> None:
    page = console.signed_in(clipboard=True)
    site = console.api(
        page, "POST", "/api/sites", {"name": "Survey shop", "domain": unique("sv") + ".example.com"}
    )
    assert isinstance(site, dict)
    survey = console.api(
        page,
        "POST",
        "/api/feedback/surveys",
        {
            "site_id": site["id"],
            "name": "Was this useful?",
            "questions": [{"type": "text", "title": "Tell us", "required": False}],
            "targeting": {"include": [], "exclude": []},
        },
    )
    assert isinstance(survey, dict)
    page.goto(f"/surveys/{survey['id']}")
    install = page.get_by_role("region", name="Show it on your site")
    expect(install).to_contain_text(f"Survey id {survey['id']}")
    expect(install.locator("code")).to_have_text(f"analytics.feedback({survey['id']});")
    expect(install).to_contain_text("Visitors see it once you publish it.")
    install.get_by_role("button", name="Copy the line").click()
    expect(install.get_by_role("status")).to_contain_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == f"analytics.feedback({survey['id']});"

    add_rule = page.get_by_role("button", name="Add a page rule")
    assert add_rule.evaluate("b => getComputedStyle(b).borderTopStyle") == "solid"
    assert add_rule.evaluate("b => getComputedStyle(b).borderTopWidth") != "0px"
    page.goto(f"/surveys?site={site['id']}")
    new = page.get_by_role("link", name="New survey")
    assert new.evaluate("a => getComputedStyle(a).textDecorationLine") == "none"
    console.shoot(page, "surveys-list")


def test_the_survey_builder_shows_every_missing_text_at_once_in_plain_words(console: Console) -> None:
    page = console.signed_in()
    site = console.api(
        page, "POST", "/api/sites", {"name": "Builder shop", "domain": unique("sb") + ".example.com"}
    )
    assert isinstance(site, dict)
    page.goto(f"/surveys/new?site={site['id']}")
    page.get_by_role("button", name="Add question").click()
    page.get_by_role("button", name="Save draft").click()
    expect(page.locator("#sv-name-error")).to_have_text("Give the survey a name.")
    expect(page.locator("#sv-name")).to_be_focused()
    expect(page.locator("#sv-questions-0-title-error")).to_have_text("Write the text of question 1.")
    expect(page.locator("#sv-questions-1-title-error")).to_have_text("Write the text of question 2.")
    expect(page.get_by_role("alert").filter(has_text="fields need your attention")).to_have_text(
        "3 fields need your attention."
    )
    expect(page.get_by_text("must be a non-empty string")).to_have_count(0)
    console.shoot(page, "survey-missing-texts")
