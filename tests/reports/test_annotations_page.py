"""Notes on the graph in real Chromium: the owner adds, changes and removes them under the chart,
each shows as a flag on the chart that names it on hover; a viewer and a shared dashboard see them
without the controls; the list reads well at 390 px in both themes."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.support.axe import assert_accessible
from tests.support.team import MEMBER_PASSWORD, token_of
from tests.web.conftest import PHONE, Console, show, unique

PHONE_390 = {**PHONE, "width": 390}


def _site(console: Console, tab: Page) -> int:
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Noted shop", "domain": unique("notes") + ".example.com"}
    )
    assert isinstance(site, dict)
    return int(site["id"])


def _today(console: Console, tab: Page, site_id: int) -> str:
    series = console.api(tab, "GET", f"/api/sites/{site_id}/reports/timeseries?range=7d")
    assert isinstance(series, dict)
    return str(series["range"]["to"])


def test_the_owner_adds_changes_and_removes_a_note_shown_as_a_flag_on_the_graph(console: Console) -> None:
    tab = console.signed_in()
    site_id = _site(console, tab)
    today = _today(console, tab, site_id)
    tab.goto(f"/sites/{site_id}/reports?range=7d")
    tab.get_by_role("button", name="+ Add a note to the graph").click()
    form = tab.get_by_role("form", name="Add a note to the graph")
    expect(form.get_by_label("Day")).to_have_value(today)
    form.get_by_label("What happened").fill("Launched the new pricing page")
    form.get_by_role("button", name="Add the note").click()

    item = tab.locator(".report-note-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("Launched the new pricing page")
    flag = tab.locator(f'.report-chart .chart-note[data-date="{today}"]')
    expect(flag).to_have_attribute("title", f"{today}: Launched the new pricing page")
    flag.hover()  # the flag sits over the chart, where the pointer reaches it
    assert tab.evaluate("document.querySelector('.chart-note:hover') !== null")
    assert_accessible(tab, "the dashboard with a note on its graph")

    for scheme in ("light", "dark"):
        show(tab, scheme, PHONE_390)
        width = tab.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE_390["width"], f"the dashboard scrolls sideways at 390 px ({scheme}): {width}"
        console.shoot(tab, f"annotations-{scheme}-390")
    show(tab, "light", {"width": 1280, "height": 860})

    tab.get_by_role("button", name="Edit the note “Launched the new pricing page”").click()
    edit = tab.get_by_role("form", name="Change the note")
    edit.get_by_label("What happened").fill("")
    expect(edit.get_by_role("button", name="Save")).to_be_disabled()
    edit.get_by_label("What happened").fill("Pricing v2 went live")
    edit.get_by_role("button", name="Save").click()
    expect(item).to_contain_text("Pricing v2 went live")
    expect(flag).to_have_attribute("title", f"{today}: Pricing v2 went live")

    tab.get_by_role("button", name="Remove the note “Pricing v2 went live”").click()
    expect(item).to_have_count(0)
    expect(tab.locator(".report-chart .chart-note")).to_have_count(0)
    assert console.api(tab, "GET", f"/api/sites/{site_id}/annotations") == {"annotations": []}


def test_a_refused_note_says_what_to_type(console: Console) -> None:
    tab = console.signed_in()
    site_id = _site(console, tab)
    tab.goto(f"/sites/{site_id}/reports?range=7d")
    tab.get_by_role("button", name="+ Add a note to the graph").click()
    form = tab.get_by_role("form", name="Add a note to the graph")
    form.get_by_label("What happened").fill("x" * 500)
    form.get_by_label("Day").fill("1999-01-01")
    form.get_by_label("Day").evaluate("input => input.removeAttribute('min')")
    form.get_by_role("button", name="Add the note").click()
    expect(form.get_by_role("alert")).to_have_text(re.compile("between 2000-01-01 and 2099-12-31"))
    expect(tab.locator(".report-note-item")).to_have_count(0)


def test_a_viewer_and_a_shared_dashboard_see_the_notes_without_the_controls(console: Console) -> None:
    owner = console.signed_in()
    site_id = _site(console, owner)
    today = _today(console, owner, site_id)
    console.api(owner, "POST", f"/api/sites/{site_id}/annotations", {"date": today, "text": "Spring sale"})
    invitation = console.api(
        owner,
        "POST",
        "/api/invitations",
        {"email": f"{unique('v')}@example.com", "role": "viewer", "site_ids": [site_id]},
    )
    assert isinstance(invitation, dict)
    share = console.api(owner, "POST", f"/api/sites/{site_id}/shares", {})
    assert isinstance(share, dict)

    ctx = console.context()
    accepted = ctx.request.post(
        "/api/invitations/accept",
        data={"token": token_of(str(invitation["url"])), "password": MEMBER_PASSWORD},
        headers={"Origin": console.server.origin},
    )
    assert accepted.status == 201, accepted.text()
    viewer = console.page(ctx)
    shared = console.page()
    for tab, url in (
        (viewer, f"/sites/{site_id}/reports?range=7d"),
        (shared, str(share["url"]).removeprefix(console.server.origin)),
    ):
        tab.goto(url)
        expect(tab.locator(".report-note-item")).to_contain_text("Spring sale")
        expect(tab.locator(f'.report-chart .chart-note[data-date="{today}"]')).to_have_attribute(
            "title", f"{today}: Spring sale"
        )
        expect(
            tab.get_by_role("button", name=re.compile("Add a note|Edit the note|Remove the note"))
        ).to_have_count(0)
