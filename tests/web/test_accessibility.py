"""axe-core over every console page, in both themes, on a desktop and a phone: no serious or
critical violation. The pages show real data (a site with traffic, a recording, a survey with a
response), so the tables, charts and badges are checked, not only empty states.

The check does not depend on the database engine, so it runs against SQLite only.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer
from tests.recordings.helpers import RecordingSite, chunk, new_recording_id, page_events, post_chunk
from tests.reports import helpers
from tests.support.axe import assert_accessible, describe, violations
from tests.support.server import LiveServer
from tests.web.conftest import Console, show, unique

pytestmark = pytest.mark.parametrize("console_server", ["sqlite"], indirect=True)

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def seeded(console_server: LiveServer) -> dict[str, Any]:
    """A site with a week of traffic, a recording and a survey with one published revision."""
    client = console_server.client()
    assert (
        client.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD}).status_code == 200
    )
    site = client.post(
        "/api/sites", json={"name": "Axe shop", "domain": unique("axe") + ".example.com"}
    ).json()
    client.patch(f"/api/sites/{site['id']}", json={"recording_enabled": True})
    for goal in (
        {"name": "Pricing", "kind": "page", "match": "exact", "path": "/pricing"},
        {"name": "Pro", "kind": "event", "event": "signup", "revenue": {"prop": "size", "currency": "EUR"}},
    ):
        assert client.post(f"/api/sites/{site['id']}/goals", json=goal).status_code == 201
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, helpers.generate(site["id"], datetime.now(UTC) - timedelta(days=1), 60, 7, 5))
    db.dispose()
    recording = new_recording_id()
    origin = f"https://{site['domain']}"
    now = int(time.time() * 1000)
    target = RecordingSite(site["id"], site["key"], origin)
    assert (
        post_chunk(
            console_server, target, recording, 0, chunk(page_events(now, href=origin + "/"))
        ).status_code
        == 202
    )
    survey = client.post(
        "/api/feedback/surveys",
        json={
            "site_id": site["id"],
            "name": "Was this page useful?",
            "questions": [
                {"type": "rating", "title": "How useful was it?", "required": True, "scale": "1-5"},
                {"type": "text", "title": "What was missing?", "required": False},
            ],
            "targeting": {"include": [], "exclude": []},
        },
    ).json()
    client.post(f"/api/feedback/surveys/{survey['id']}/publish", headers={"Content-Type": "application/json"})
    client.close()
    return {"site": site["id"], "recording": recording, "survey": survey["id"]}


PAGES = [
    ("/sites", "Sites"),
    ("/overview", "All sites"),
    ("/sites/{site}", "Axe shop"),
    ("/sites/{site}/settings", "Settings"),
    ("/health", "Health"),
    ("/team", "Team"),
    ("/team/keys", "API keys"),
    ("/reports", None),
    ("/sites/{site}/reports", None),
    ("/sites/{site}/realtime", None),
    ("/sites/{site}/conversions", None),
    ("/sites/{site}/heatmap?path=%2F", "Click heatmap"),
    ("/recordings?site={site}", None),
    ("/recordings/{recording}", None),
    ("/surveys?site={site}", None),
    ("/surveys/new?site={site}", None),
    ("/surveys/{survey}", None),
    ("/surveys/{survey}/responses", None),
    ("/sites/{site}/no-such-page", None),
]


# The four looks each page is checked in: both themes, on a desktop and on a phone.
LOOKS = [(scheme, size) for scheme in ("light", "dark") for size in SIZES]


def violations_in_every_look(page: Page, where: str, first: int) -> list[str]:
    """axe-core's findings on the page in each look, starting with LOOKS[first] (the one it was
    loaded in)."""
    found = []
    for scheme, size in LOOKS[first:] + LOOKS[:first]:
        show(page, scheme, SIZES[size])
        serious = violations(page)
        if serious:
            found.append(f"{where} ({scheme}, {size}):\n{describe(serious)}")
    return found


def test_every_console_page_passes_axe_core_in_both_themes_on_a_desktop_and_a_phone(
    console: Console, seeded: dict[str, Any]
) -> None:
    """Each page is loaded once and checked in the four looks: a page load costs more than a check
    (each look took its own load and tab before, 3 of 4 loads went). The look a page loads in
    turns with each page, so every look is also checked as a page first renders in it."""
    page = console.signed_in(scheme=LOOKS[0][0], viewport=SIZES[LOOKS[0][1]])
    found: list[str] = []
    for n, (template, heading) in enumerate(PAGES):
        first = n % len(LOOKS)
        show(page, LOOKS[first][0], SIZES[LOOKS[first][1]])
        path = template.format(**seeded)
        page.goto(path)
        if heading:
            expect(page.get_by_role("heading", level=1, name=heading)).to_be_visible()
        else:
            expect(page.locator("main h1")).to_be_visible()
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(300)
        found += violations_in_every_look(page, path, first)
    page.context.clear_cookies()
    first = len(PAGES) % len(LOOKS)
    show(page, LOOKS[first][0], SIZES[LOOKS[first][1]])
    page.goto("/login")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    found += violations_in_every_look(page, "/login", first)
    assert found == [], "axe-core:\n" + "\n".join(found)


def test_the_setup_page_passes_axe_core_and_opens_without_an_error(
    console: Console, start_server: StartServer
) -> None:
    fresh = start_server()
    link = fresh.setup_link()
    assert link is not None
    page = console.page(scheme=LOOKS[0][0], viewport=SIZES[LOOKS[0][1]])
    page.goto(link)
    expect(page.get_by_role("heading", name="Set up Sightline")).to_be_visible()
    for scheme, size in LOOKS:
        show(page, scheme, SIZES[size])
        # The error box is hidden until there is an error (.notice's display must not beat `hidden`).
        expect(page.get_by_role("alert")).to_be_hidden()
        assert page.locator("#message").evaluate("e => getComputedStyle(e).display") == "none"
        assert_accessible(page, f"/setup ({scheme}, {size})")
        console.shoot(page, f"setup-{scheme}-{size}")
