"""The survey widget in real Chromium: when `feedback()` shows it, and a visitor answering it."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.sdk.helpers import Store, hide_page
from tests.support.browser import plugins_ran
from tests.support.server import LiveServer
from tests.surveys.browser import DESKTOP_CHROME, Shop, Site, open_page, wait_until
from tests.surveys.conftest import database_of
from tests.surveys.helpers import QUESTIONS

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "surveys"
DIALOG = "[data-sightline-survey] .panel"


def make_survey(site: Site, publish: bool = True, **changes: Any) -> int:
    body: dict[str, Any] = {"site_id": site.id, "name": "Help us improve", "questions": QUESTIONS}
    body.update(changes)
    created = site.owner.post("/api/feedback/surveys", json=body)
    assert created.status_code == 201, created.text
    survey_id: int = created.json()["id"]
    if publish:
        published = site.owner.post(f"/api/feedback/surveys/{survey_id}/publish", json={})
        assert published.status_code == 200, published.text
    return survey_id


def feedback(page: Page, survey_id: int | str) -> bool:
    shown: bool = page.evaluate("id => analytics.feedback(id)", survey_id)
    return shown


def exported(site: Site, survey_id: int) -> list[list[str]]:
    response = site.owner.get(f"/api/feedback/surveys/{survey_id}/export")
    assert response.status_code == 200, response.text
    return list(csv.reader(io.StringIO(response.text, newline="")))


def focused_in_widget(page: Page) -> str | None:
    """What has focus inside the widget's shadow root (tag, type and value), or None."""
    found: str | None = page.evaluate(
        """() => {
            const host = document.activeElement;
            const inner = host && host.shadowRoot && host.shadowRoot.activeElement;
            if (!inner) return null;
            return [inner.tagName.toLowerCase(), inner.type || '', inner.value || ''].join(':');
        }"""
    )
    return found


def test_a_published_targeted_survey_is_shown_as_a_labelled_dialog(
    page: Page, shop: Shop, site: Site
) -> None:
    survey_id = make_survey(site, accent_color="#7c3aed")
    open_page(page, shop.url("/app/home"))
    assert feedback(page, survey_id) is True
    dialog = page.locator(DIALOG)
    assert dialog.get_attribute("role") == "dialog"
    assert page.get_by_role("dialog", name="Help us improve").is_visible()
    assert page.evaluate("document.querySelector('[data-sightline-survey]').shadowRoot !== null")
    assert focused_in_widget(page) == "input:radio:0"
    for title in (q["title"] for q in QUESTIONS):
        assert page.get_by_text(title).is_visible()
    assert page.locator(f"{DIALOG} .send").evaluate("b => getComputedStyle(b).backgroundColor") == (
        "rgb(124, 58, 237)"
    )


@pytest.mark.parametrize("signal", ["doNotTrack", "globalPrivacyControl"])
def test_dnt_or_gpc_keeps_the_survey_hidden(page: Page, shop: Shop, site: Site, signal: str) -> None:
    value = "'1'" if signal == "doNotTrack" else "true"
    page.add_init_script(f"Object.defineProperty(Navigator.prototype, '{signal}', {{get: () => {value}}})")
    survey_id = make_survey(site)
    open_page(page, shop.url("/app/home"))
    assert feedback(page, survey_id) is False
    assert page.locator("[data-sightline-survey]").count() == 0


def test_before_start_no_survey_is_shown(page: Page, shop: Shop, site: Site) -> None:
    survey_id = make_survey(site)
    shop.use(site.base_url, site.key, consent="required")
    open_page(page, shop.url("/app/home"), ready=False)
    assert feedback(page, survey_id) is False
    page.evaluate("analytics.start()")
    assert feedback(page, survey_id) is True


def test_drafts_archived_and_unknown_surveys_are_not_shown(page: Page, shop: Shop, site: Site) -> None:
    draft = make_survey(site, publish=False)
    archived = make_survey(site)
    site.owner.post(f"/api/feedback/surveys/{archived}/archive", json={})
    open_page(page, shop.url("/app/home"))
    assert feedback(page, draft) is False
    assert feedback(page, archived) is False
    assert feedback(page, 999999) is False
    assert feedback(page, "not-an-id") is False
    assert page.locator("[data-sightline-survey]").count() == 0


def test_pages_outside_the_targeting_are_skipped(page: Page, shop: Shop, site: Site) -> None:
    targeting = {
        "include": [{"match": "prefix", "path": "/app/"}, {"match": "glob", "path": "/docs/*/install"}],
        "exclude": [{"match": "exact", "path": "/app/private"}],
    }
    survey_id = make_survey(site, targeting=targeting)
    for path, shown in [("/pricing", False), ("/app/private", False), ("/docs/linux/install", True)]:
        open_page(page, shop.url(path))
        assert feedback(page, survey_id) is shown, path


def test_only_one_survey_is_open_at_a_time(page: Page, shop: Shop, site: Site) -> None:
    first, second = make_survey(site), make_survey(site, name="Second")
    open_page(page, shop.url("/app/home"))
    assert feedback(page, first) is True
    assert feedback(page, second) is False
    assert page.locator("[data-sightline-survey]").count() == 1


def test_a_visitor_completes_the_survey_with_the_keyboard_alone(page: Page, shop: Shop, site: Site) -> None:
    survey_id = make_survey(site)
    open_page(page, shop.url("/app/home"))
    assert feedback(page, survey_id) is True
    keyboard = page.keyboard
    for _ in range(9):
        keyboard.press("ArrowRight")  # rating 0 -> 9
    assert focused_in_widget(page) == "input:radio:9"
    keyboard.press("Tab")
    keyboard.press("ArrowRight")  # plan: Pro
    assert focused_in_widget(page) == "input:radio:pro"
    keyboard.press("Tab")
    keyboard.press("Space")  # Speed
    keyboard.press("Tab")
    keyboard.press("Tab")
    keyboard.press("Space")  # Docs
    keyboard.press("Tab")
    keyboard.type("Clear and fast, thanks")
    keyboard.press("Tab")
    assert focused_in_widget(page) == "button:submit:"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "widget-filled.png"))
    keyboard.press("Enter")
    page.get_by_text("Thank you for your feedback!").wait_for()
    assert focused_in_widget(page) == "button:button:"
    page.screenshot(path=str(ARTIFACTS / "widget-thanks.png"))
    keyboard.press("Enter")
    assert page.locator("[data-sightline-survey]").count() == 0

    rows = exported(site, survey_id)
    assert len(rows) == 2
    visitor = page.evaluate("analytics.getVisitorId()")
    assert rows[1][2:] == ["1", visitor, "/app/home", "9", "Pro", "Speed; Docs", "Clear and fast, thanks"]


def test_required_questions_must_be_answered_before_sending(page: Page, shop: Shop, site: Site) -> None:
    survey_id = make_survey(site)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.url.endswith("/i/feedback/responses") else None)
    open_page(page, shop.url("/app/home"))
    feedback(page, survey_id)
    page.locator(f"{DIALOG} .send").click()
    error = page.get_by_text("This question needs an answer.")
    assert error.is_visible()
    assert focused_in_widget(page) == "input:radio:free"
    assert page.locator(f"{DIALOG} input[value=free]").get_attribute("aria-invalid") == "true"
    assert posts == []
    page.get_by_role("radio", name="Free").check()
    page.locator(f"{DIALOG} .send").click()
    page.get_by_text("Thank you for your feedback!").wait_for()
    assert len(posts) == 1
    assert exported(site, survey_id)[1][5:] == ["", "Free", "", ""]


def test_escape_closes_and_gives_focus_back(page: Page, shop: Shop, site: Site) -> None:
    survey_id = make_survey(site)
    open_page(page, shop.url("/app/home"))
    page.evaluate(
        """id => {
            const ask = document.createElement('button');
            ask.id = 'ask';
            ask.textContent = 'Give feedback';
            ask.onclick = () => analytics.feedback(id).then(shown => (window.__shown = shown));
            document.body.append(ask);
        }""",
        survey_id,
    )
    page.focus("#ask")
    page.keyboard.press("Enter")
    page.wait_for_function("window.__shown === true")
    assert focused_in_widget(page) is not None
    page.keyboard.press("Escape")
    assert page.locator("[data-sightline-survey]").count() == 0
    assert page.evaluate("document.activeElement.id") == "ask"


def test_an_answered_or_dismissed_revision_is_not_shown_again(page: Page, shop: Shop, site: Site) -> None:
    answered, dismissed = make_survey(site), make_survey(site, name="Dismissed")
    open_page(page, shop.url("/app/home"))
    assert feedback(page, answered) is True
    page.get_by_role("radio", name="Pro").check()
    page.locator(f"{DIALOG} .send").click()
    page.get_by_text("Thank you for your feedback!").wait_for()
    page.get_by_role("button", name="Close", exact=True).click()
    assert feedback(page, dismissed) is True
    page.get_by_role("button", name="Close survey").click()

    open_page(page, shop.url("/app/other"))
    assert feedback(page, answered) is False
    assert feedback(page, dismissed) is False

    site.owner.patch(f"/api/feedback/surveys/{answered}", json={"name": "Help us improve, again"})
    site.owner.post(f"/api/feedback/surveys/{answered}/publish", json={})
    assert feedback(page, answered) is True  # a new revision is a new question to this visitor


def test_the_widget_fills_a_small_screen(browser: Browser, shop: Shop, site: Site) -> None:
    context = browser.new_context(user_agent=DESKTOP_CHROME, viewport={"width": 360, "height": 640})
    try:
        page = context.new_page()
        survey_id = make_survey(site)
        open_page(page, shop.url("/app/home"))
        assert feedback(page, survey_id) is True
        page.locator(DIALOG).evaluate("panel => Promise.all(panel.getAnimations().map(a => a.finished))")
        box = page.locator(DIALOG).bounding_box()
        assert box is not None
        assert box["x"] == 0
        assert box["width"] == 360
        assert box["y"] + box["height"] <= 640
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "widget-small-screen.png"))
    finally:
        context.close()


def test_a_failed_send_keeps_the_answers_and_can_be_retried(page: Page, shop: Shop, site: Site) -> None:
    survey_id = make_survey(site)
    open_page(page, shop.url("/app/home"))
    feedback(page, survey_id)
    refused = {"count": 0}

    def refuse_once(route: Any) -> None:
        if refused["count"] == 0:
            refused["count"] += 1
            route.fulfill(status=400, body='{"error": {"code": "x", "message": "x"}}')
        else:
            route.continue_()

    page.route("**/i/feedback/responses", refuse_once)
    page.get_by_role("radio", name="Free").check()
    page.locator(f"{DIALOG} .send").click()
    page.get_by_text("Your answers could not be sent. Please try again.").wait_for()
    assert page.get_by_role("radio", name="Free").is_checked()
    page.locator(f"{DIALOG} .send").click()
    page.get_by_text("Thank you for your feedback!").wait_for()
    wait_until(page, lambda: len(exported(site, survey_id)) == 2)


def test_clicks_on_the_survey_widget_are_never_the_sites_heatmap_or_dead_clicks(
    page: Page, shop: Shop, site: Site, console_server: LiveServer
) -> None:
    survey_id = make_survey(site)
    shop.use(site.base_url, site.key, heatmaps="")
    open_page(page, shop.url("/pricing"))
    plugins_ran(page, "heatmaps")
    assert feedback(page, survey_id) is True
    panel = page.locator(DIALOG)
    panel.get_by_text("Pro", exact=True).click()
    for _ in range(4):  # a burst on the widget's own text: a rage and dead click were it the site's
        panel.locator("h2, legend").first.click(delay=10)
    page.wait_for_timeout(1300)
    page.click("h1")  # the site's own page is still captured
    hide_page(page)
    db = database_of(console_server)
    try:
        store = Store(db)
        wait_until(page, lambda: any(e.name == "heatmap_click" for e in store.events(site)))
        page.wait_for_timeout(500)
        clicks = [e.props for e in store.events(site) if e.name == "heatmap_click"]
    finally:
        db.dispose()
    assert [c["selector"] for c in clicks] == ["html>body>h1"], clicks
