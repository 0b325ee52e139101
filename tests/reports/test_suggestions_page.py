"""The goal form and the dashboard's "Add a filter" suggest the site's own values as the owner
types (pages, events, prop keys and values, sources), from the breakdown API's search; a value the
API refuses is explained in the owner's words, not the API's."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from playwright.sync_api import Locator, Page, expect

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.reports import helpers
from tests.reports.helpers import wait_caught_up
from tests.support.server import LiveServer
from tests.web.conftest import Console, unique


def _options(tab: Page, list_id: str) -> Locator:
    return tab.locator(f"datalist#{list_id} option")


def _suggests(tab: Page, list_id: str, values: list[str]) -> None:
    """The list offers exactly ``values`` (waiting for the answer to what was typed last)."""
    options = _options(tab, list_id)
    for value in values:
        expect(options.and_(tab.locator(f'[value="{value}"]'))).to_have_count(1)
    expect(options).to_have_count(len(values))


def test_goal_and_filter_fields_suggest_the_sites_values_and_refusals_say_what_to_type(
    console: Console, console_server: LiveServer
) -> None:
    tab = console.signed_in()
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Hints", "domain": f"{unique('hints')}.example.com"}
    )
    assert isinstance(site, dict)
    site_id = int(site["id"])
    at = datetime.now(UTC) - timedelta(minutes=30)
    rows = [
        helpers.pageview(site_id, at, "ana", "/pricing", "google.com"),
        helpers.pageview(site_id, at + timedelta(seconds=5), "ana", "/docs", "google.com"),
        helpers.pageview(site_id, at + timedelta(minutes=1), "bo", "/docs", "twitter.com"),
    ]
    rows.append(replace(rows[0], time=at + timedelta(seconds=9), name="signup", props={"plan": "pro"}))
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    with console_server.client() as client:
        signed = client.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD})
        assert signed.status_code == 200
        wait_caught_up(client)

    tab.goto(f"/sites/{site_id}/settings#goals")
    goals = tab.locator("section", has=tab.get_by_role("heading", name="Goals", exact=True))
    goals.get_by_role("button", name="Add a goal").click()
    goals.get_by_role("button", name="Add the goal").click()  # no name: the API refuses it
    expect(goals.locator(".field-error")).to_have_text(
        "Give the goal a name (up to 100 characters, on one line)."
    )
    expect(goals).not_to_contain_text("The field 'name'")
    goals.get_by_label("Path").fill("/pri")
    _suggests(tab, "goal-path-suggestions", ["/pricing"])
    goals.get_by_label("send a custom event").check()
    goals.get_by_label("Event name").fill("sig")
    _suggests(tab, "goal-event-suggestions", ["signup"])
    goals.get_by_label("Event name").fill("signup")
    _suggests(tab, "goal-prop-keys", ["plan"])
    goals.get_by_label("Only when the prop (optional)").fill("plan")
    _suggests(tab, "goal-prop-values", ["pro"])

    tab.goto(f"/sites/{site_id}/reports?range=today")
    tab.get_by_role("button", name="Add a filter").click()
    form = tab.get_by_role("form", name="Add a filter")
    form.get_by_label("Filter").select_option("source")
    value = form.get_by_role("combobox", name="Value", exact=True)
    expect(value).to_have_attribute("list", "filter-suggestions")
    expect(_options(tab, "filter-suggestions")).to_have_count(2)  # nothing typed: the top values
    value.fill("goo")
    _suggests(tab, "filter-suggestions", ["google.com"])
    form.get_by_label("Filter").select_option("page")
    value.fill("/do")
    _suggests(tab, "filter-suggestions", ["/docs"])


def test_a_prop_filter_suggests_the_sites_prop_keys_then_the_chosen_keys_values(
    console: Console, console_server: LiveServer
) -> None:
    tab = console.signed_in()
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Props", "domain": f"{unique('props')}.example.com"}
    )
    assert isinstance(site, dict)
    site_id = int(site["id"])
    at = datetime.now(UTC) - timedelta(minutes=5)
    seen = helpers.pageview(site_id, at, "cy", "/pricing")
    rows = [
        seen,
        replace(seen, time=at + timedelta(seconds=1), name="signup", props={"plan": "pro"}),
        replace(seen, time=at + timedelta(seconds=2), name="signup", props={"plan": "free"}),
        replace(
            seen, time=at + timedelta(seconds=3), name="purchase", props={"plan": "pro", "coupon": "spring"}
        ),
    ]
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    with console_server.client() as client:
        signed = client.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD})
        assert signed.status_code == 200
        wait_caught_up(client)

    tab.goto(f"/sites/{site_id}/reports?range=today")
    tab.get_by_role("button", name="Add a filter").click()
    form = tab.get_by_role("form", name="Add a filter")
    form.get_by_label("Filter").select_option("prop")
    value = form.get_by_role("combobox", name="Value", exact=True)
    expect(value).to_have_attribute("list", "filter-suggestions")
    _suggests(tab, "filter-suggestions", ["coupon:", "plan:"])  # the keys of every event's props
    value.fill("plan:")
    _suggests(tab, "filter-suggestions", ["plan:free", "plan:pro"])
    value.fill("coupon:")
    _suggests(tab, "filter-suggestions", ["coupon:spring"])
    value.fill("plan:pro")
    form.get_by_role("button", name="Apply").click()
    expect(tab).to_have_url(re.compile(r"prop=plan(%3A|:)pro"))
