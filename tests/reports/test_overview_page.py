"""Every site at a glance in real Chromium: each site's visitors, pageviews, change and graph,
sortable by each column, over the dashboard's periods and shortcuts; a site opens its dashboard
over the same period; at 390 px in both themes, axe-clean; a viewer sees only their sites; the
sites list shows each site's change over 7 days from the same answer."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from playwright.sync_api import Page, expect

from sightline.database import open_database
from tests.conftest import sign_in
from tests.reports import helpers
from tests.support.axe import assert_accessible
from tests.support.server import LiveServer, create_owner
from tests.support.team import MEMBER_PASSWORD, token_of
from tests.web.conftest import PHONE, Console, show, unique

PHONE_390 = {**PHONE, "width": 390}


def _seed(console: Console, tab: Page, server: LiveServer, name: str, visitors: int) -> int:
    """A site with ``visitors`` visitors in the last hours (one pageview each) and none before."""
    site = console.api(tab, "POST", "/api/sites", {"name": name, "domain": unique("glance") + ".example.com"})
    assert isinstance(site, dict)
    site_id = int(site["id"])
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    start = max(now - timedelta(hours=2), now.replace(hour=0))
    rows = [
        helpers.pageview(site_id, start + timedelta(seconds=n), f"{name}-v{n}", "/") for n in range(visitors)
    ]
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    return site_id


def _rows(tab: Page) -> list[str]:
    return tab.locator(".overview-table tbody th a").all_inner_texts()


def test_the_owner_sees_every_site_sorts_them_and_opens_one_over_the_same_period(
    console: Console, console_server: LiveServer
) -> None:
    tab = console.signed_in()
    small = _seed(console, tab, console_server, "Glance small", 2)
    big = _seed(console, tab, console_server, "Glance big", 5)
    client = sign_in(console_server)
    helpers.wait_caught_up(client)
    client.close()

    tab.goto("/sites")
    tab.get_by_role("link", name="All sites at a glance").click()
    expect(tab.get_by_role("heading", name="All sites", exact=True)).to_be_visible()
    table = tab.locator(".overview-table")
    row = table.locator(f"tr[data-site-id='{big}']")
    expect(row.locator("td").nth(0)).to_have_text("5")
    expect(row.locator("td").nth(1)).to_have_text("5")
    # Nothing the week before: no percentage, and words say why.
    expect(row.locator(".overview-change")).to_contain_text("no visitors in the previous period")
    expect(
        row.get_by_role("img", name=re.compile(r"^Visitors per day: at most 5 in one day, 7 days$"))
    ).to_be_visible()
    assert _rows(tab).index("Glance big") < _rows(tab).index("Glance small")

    # Sorting: by name ascending, then visitors ascending.
    table.get_by_role("button", name="Site").click()
    expect(table.locator("th[aria-sort='ascending']")).to_have_text(re.compile("Site"))
    names = [n for n in _rows(tab) if n.startswith("Glance")]
    assert names == ["Glance big", "Glance small"]
    table.get_by_role("button", name="Visitors").click()
    table.get_by_role("button", name="Visitors").click()
    expect(table.locator("th[aria-sort='ascending']")).to_have_text(re.compile("Visitors"))
    assert _rows(tab).index("Glance small") < _rows(tab).index("Glance big")

    # The period's shortcut (T: 30 days) asks again and keeps the period in the address.
    tab.keyboard.press("t")
    expect(tab).to_have_url(re.compile(r"/overview\?range=30d$"))
    expect(tab.get_by_role("button", name="30 days")).to_have_attribute("aria-pressed", "true")
    expect(row.get_by_role("img", name=re.compile(r"30 days$"))).to_be_visible()
    tab.get_by_role("button", name="Today").click()
    expect(row.get_by_role("img", name=re.compile(r"hours$"))).to_be_visible()
    # The dashboard's own menu: its other periods and custom dates, without realtime or a comparison.
    periods = tab.get_by_label("More periods")
    options = periods.locator("option").all_inner_texts()
    assert options == [
        "More periods…",
        "Yesterday (E)",
        "This month (M)",
        "Last month (L)",
        "12 months (Y)",
        "All time (A)",
    ]
    expect(tab.get_by_label("Compare with")).to_have_count(0)
    periods.select_option("last_month")
    expect(tab).to_have_url(re.compile(r"/overview\?range=last_month$"))
    tab.locator("main h1").click()  # keys go to the page
    tab.keyboard.press("r")  # realtime is the dashboard's alone
    tab.keyboard.press("c")
    dates = tab.locator("form.report-dates")
    start = (datetime.now(UTC).date() - timedelta(days=3)).isoformat()
    dates.get_by_label("From").fill(start)
    dates.get_by_role("button", name="Apply").click()
    expect(tab).to_have_url(re.compile(rf"/overview\?range=custom&from={start}&to=\d{{4}}-\d\d-\d\d$"))
    expect(tab.get_by_role("button", name="Custom")).to_have_attribute("aria-pressed", "true")
    expect(row.locator("td").nth(0)).to_have_text("5")
    tab.get_by_role("button", name="Today").click()
    expect(row.get_by_role("img", name=re.compile(r"hours$"))).to_be_visible()
    assert_accessible(tab, "all sites at a glance")
    for scheme in ("light", "dark"):
        show(tab, scheme, PHONE_390)
        width = tab.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE_390["width"], f"all sites scrolls sideways at 390 px ({scheme}): {width}"
        assert_accessible(tab, f"all sites at 390 px, {scheme}")
        console.shoot(tab, f"overview-{scheme}-390")
    show(tab, "light", {"width": 1280, "height": 860})

    tab.locator(f"tr[data-site-id='{small}']").get_by_role("link", name="Glance small").click()
    expect(tab).to_have_url(re.compile(rf"/sites/{small}/reports\?range=today$"))
    expect(tab.get_by_role("button", name="Today")).to_have_attribute("aria-pressed", "true")

    # The sites list: the last 7 days' visitors, their change on the 7 days before and the
    # graph, from one request (the overview's).
    tab.goto("/sites")
    item = tab.locator(f"[data-site-id='{big}']")
    expect(item.locator(".trend-today")).to_have_text("5 visitors in 7 days")
    expect(item.locator(".site-week-change")).to_contain_text("on the 7 days before")


def test_a_viewer_sees_only_their_site_and_an_owner_without_sites_is_told_so(
    console: Console, console_server: LiveServer
) -> None:
    tab = console.signed_in()
    mine = _seed(console, tab, console_server, "Glance viewer's", 1)
    _seed(console, tab, console_server, "Glance hidden", 1)
    invitation = console.api(
        tab,
        "POST",
        "/api/invitations",
        {"email": unique("v") + "@example.com", "role": "viewer", "site_ids": [mine]},
    )
    assert isinstance(invitation, dict)
    viewer = console.page()
    console.api(
        viewer,
        "POST",
        "/api/invitations/accept",
        {"token": token_of(str(invitation["url"])), "password": MEMBER_PASSWORD},
    )
    viewer.goto("/overview?range=7d")
    expect(viewer.locator(".overview-table tbody tr")).to_have_count(1)
    expect(viewer.locator(".overview-table tbody th a")).to_have_text("Glance viewer's")

    email = unique("alone") + "@example.com"
    create_owner(console_server, email, "a long enough password here")
    alone = console.page()
    login = alone.context.request.post(
        "/api/login",
        data={"email": email, "password": "a long enough password here"},
        headers={"Origin": console_server.origin},
    )
    assert login.ok, login.text()
    alone.goto("/overview")
    expect(alone.get_by_role("heading", name="No sites to show")).to_be_visible()
    assert_accessible(alone, "all sites with no site")
