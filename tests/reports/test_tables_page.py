"""Report tables in real Chromium: each row's bar and share, and the details view with every row,
a search and pages, at 1280x800 and 390x844 in both themes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from sightline.database import open_database
from tests.reports import helpers
from tests.support.server import LiveServer
from tests.web.conftest import WHOLE_TABS, Console, unique

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
PAGES = 27


@pytest.fixture(scope="module")
def many_pages(console_server: LiveServer) -> int:
    """A site whose 27 pages had 1..27 visitors each today (page-27 the most)."""
    with console_server.client() as client:
        assert (
            client.post(
                "/api/login", json={"email": "owner@example.com", "password": "correct horse battery staple"}
            ).status_code
            == 200
        )
        site = client.post(
            "/api/sites", json={"name": "Many pages", "domain": unique("many") + ".example.com"}
        ).json()
        now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        start = max(now - timedelta(hours=2), now.replace(hour=0))
        rows = [
            helpers.Event(
                site["id"],
                start + timedelta(seconds=n * 7 + i),
                f"v{n}-{i}",
                f"s{n}-{i}",
                "pageview",
                f"/page-{n}",
                None,
                None,
                None,
                None,
                "Chrome",
                "Linux",
                "desktop",
            )
            for n in range(1, PAGES + 1)
            for i in range(n)
        ]
        assert console_server.database_url is not None
        db = open_database(console_server.database_url, migrate=False)
        helpers.insert_events(db, rows)
        db.dispose()
        helpers.wait_caught_up(client)
        return int(site["id"])


def test_every_row_has_a_bar_and_a_share_and_the_details_hold_every_row(
    console: Console, many_pages: int
) -> None:
    total = PAGES * (PAGES + 1) // 2
    tab = console.signed_in()
    tab.goto(f"/sites/{many_pages}/reports?range=today")
    table = tab.locator('.report-panel table[data-dimension="page"]')
    expect(table.locator("tbody tr")).to_have_count(10)
    first = table.locator("tbody tr").first
    expect(first.locator("th")).to_contain_text("/page-27")
    expect(first.locator("td.report-share")).to_have_text(f"{round(27 / total * 100)}%")
    widths = table.locator(".report-bar").evaluate_all(
        "bars => bars.map(b => b.getBoundingClientRect().width)"
    )
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] < widths[0]
    assert abs(widths[9] / widths[0] - 18 / 27) < 0.02
    expect(tab.get_by_text("Top 10 shown")).to_be_visible()

    tab.get_by_role("button", name="Details: all top pages").click()
    dialog = tab.get_by_role("dialog", name="Pages: Top pages")
    expect(dialog.locator("tbody tr")).to_have_count(20)
    expect(dialog.get_by_role("status")).to_have_text("Rows 1\N{EN DASH}20")
    dialog.get_by_role("button", name="Next").click()
    expect(dialog.get_by_role("status")).to_have_text(f"Rows 21\N{EN DASH}{PAGES} of {PAGES}")
    expect(dialog.locator("tbody tr")).to_have_count(PAGES - 20)
    expect(dialog.locator("tbody tr").last).to_contain_text("/page-1")
    expect(dialog.get_by_role("button", name="Next")).to_be_disabled()
    dialog.get_by_label("Search").fill("page-2")
    expect(dialog.get_by_role("status")).to_have_text('Rows 1\N{EN DASH}9 of 9 containing "page-2"')
    dialog.get_by_label("Search").fill("nothing-like-this")
    expect(dialog.get_by_text('Nothing matches "nothing-like-this".')).to_be_visible()
    dialog.get_by_label("Search").fill("page-13")
    dialog.get_by_role("button", name="/page-13", exact=True).click()
    expect(dialog).to_be_hidden()
    expect(tab).to_have_url(re.compile(r"page=%2Fpage-13"))
    expect(tab.locator(".filter-chip")).to_contain_text("/page-13")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_details_view_fits_the_screen_in_both_themes(
    console: Console, many_pages: int, scheme: str, size: str
) -> None:
    tab = console.signed_in(scheme=scheme, viewport=SIZES[size])
    tab.goto(f"/sites/{many_pages}/reports?range=today")
    expect(tab.locator('.report-panel table[data-dimension="page"] tbody tr')).to_have_count(10)
    tab.wait_for_load_state("networkidle")
    width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    heads = tab.locator('.report-panel table[data-dimension="page"] thead th').evaluate_all(
        "cells => cells.map(c => c.getBoundingClientRect().height)"
    )
    assert max(heads) < 40, f"a column heading wraps: {heads}"
    # Every tab is shown whole within its group (a group too wide for a phone wraps onto a second
    # row rather than cutting its last tab, as "UTM me..." was).
    for group in tab.locator(".report-panel .segmented").all():
        assert group.evaluate(WHOLE_TABS) == [], "a tab is cut"
    # ... and with whole labels: "UTM source" is read, not "source" with its prefix clipped away.
    prefix = tab.locator(".report-panel .segmented .tab-prefix").first
    assert prefix.evaluate("(e) => e.getBoundingClientRect().width") > 10
    console.shoot(tab, f"reports-{scheme}-{size}")
    tab.get_by_role("button", name="Details: all top pages").click()
    dialog = tab.get_by_role("dialog", name="Pages: Top pages")
    expect(dialog.locator("tbody tr")).to_have_count(20)
    console.shoot(tab, f"reports-details-{scheme}-{size}")


def test_the_chart_legend_shows_the_latest_point_at_rest_and_an_empty_comparison_says_so(
    console: Console, many_pages: int
) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{many_pages}/reports?range=today")
    legend = tab.locator(".report-chart .u-legend")
    expect(legend).to_contain_text("Hour")
    values = legend.locator(".u-value").all_inner_texts()
    assert values
    assert all(v.strip() not in ("", "--", "-", "\N{EN DASH}") for v in values[:2]), values
    # Yesterday had no visits: the comparison says so rather than drawing a flat line.
    expect(tab.locator(".report-note")).to_contain_text("Nothing to compare with: no visits from")
    # The note follows the summary, the legend the chart, drawn from another request and redrawn
    # once the summary is in: the legend drops its line when it catches up.
    expect(legend.get_by_text("Previous period")).to_have_count(0)
    tab.goto(f"/sites/{many_pages}/reports?range=7d")
    expect(legend).to_contain_text("Day")
    # A daily point reads as a day, never as a time of day.
    first_value = legend.locator(".u-value").first
    expect(first_value).not_to_have_text(re.compile(r"\d:\d\d|am|pm", re.IGNORECASE))


def test_the_sites_list_and_the_reports_index_show_visitors_today_and_a_sparkline(
    console: Console, many_pages: int
) -> None:
    total = PAGES * (PAGES + 1) // 2
    tab = console.signed_in(viewport=SIZES["phone"])
    # The sites list counts the 7 days' visitors, the reports index today's (all of them today).
    for path, row, said in (
        ("/sites", f"[data-site-id='{many_pages}']", "in 7 days"),
        ("/reports", "li.report-site", "today"),
    ):
        tab.goto(path)
        site = tab.locator(row).filter(has_text="Many pages")
        expect(site.locator(".trend-today")).to_have_text(f"{total} visitors {said}")
        spark = site.get_by_role("img", name=re.compile(r"^Visitors of the last 7 days: "))
        expect(spark).to_have_attribute("aria-label", re.compile(rf", \w+ {total}$"))
        points = spark.locator("polyline").get_attribute("points") or ""
        assert len(points.split()) == 7
        # Today is the highest point: the line ends at the top of the box.
        assert float(points.split()[-1].split(",")[1]) <= 2.5
        width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= viewport
    console.shoot(tab, "reports-index-phone")
    tab.goto("/sites")
    expect(tab.locator(".trend-today").first).to_be_visible()
    console.shoot(tab, "sites-sparklines-phone")


HEADINGS = """tables => tables.flatMap(table => {
  const found = [];
  const head = table.querySelector("thead");
  // A table shown as cards on a phone (.card-table) names each figure in its card, not in a heading.
  if (head && getComputedStyle(head).position === "absolute") return found;
  let previous = null;
  for (const cell of table.querySelectorAll("thead th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) {
      if (!walker.currentNode.parentElement.closest(".visually-hidden")) nodes.push(walker.currentNode);
    }
    const rects = node => { const r = document.createRange(); r.selectNodeContents(node);
      return [...r.getClientRects()].filter(x => x.width > 1); };
    const text = nodes.flatMap(rects);
    const label = nodes.map(n => n.textContent).join("").trim();
    if (!label || !text.length) { previous = null; continue; }
    const box = cell.getBoundingClientRect();
    const left = Math.min(...text.map(r => r.left)), right = Math.max(...text.map(r => r.right));
    if (left < box.left - 0.5 || right > box.right + 0.5) found.push(`${label}: outside its column`);
    for (const node of nodes) {
      // A word broken over two lines ("Visitor/s") shows as two line boxes of one word.
      for (const match of node.textContent.matchAll(/\\S+/g)) {
        const r = document.createRange();
        r.setStart(node, match.index); r.setEnd(node, match.index + match[0].length);
        const lines = new Set([...r.getClientRects()].filter(x => x.width > 1).map(x => Math.round(x.top)));
        if (lines.size > 1) found.push(`${label}: "${match[0]}" broken over ${lines.size} lines`);
      }
    }
    if (previous !== null && left - previous < 6) {
      found.push(`${label}: ${(left - previous).toFixed(1)} px from the heading before`);
    }
    previous = right;
  }
  return found.map(f => `${table.dataset.dimension}: ${f}`);
})"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_numeric_heading_reads_whole_and_apart_on_a_phone(
    console: Console, many_pages: int, scheme: str
) -> None:
    tab = console.signed_in(scheme=scheme, viewport=SIZES["phone"])
    goals = console.api(tab, "GET", f"/api/sites/{many_pages}/goals")
    assert isinstance(goals, dict)
    if not goals["goals"]:  # the goals table's headings too ("Conversions" is the longest)
        goal = {"name": "Saw page 27", "kind": "page", "match": "exact", "path": "/page-27"}
        console.api(tab, "POST", f"/api/sites/{many_pages}/goals", goal)
    tab.goto(f"/sites/{many_pages}/reports?range=today")
    expect(tab.locator('.report-panel table[data-dimension="page"] tbody tr')).to_have_count(10)
    expect(tab.locator('table[data-dimension="goals"] tbody tr')).to_have_count(1)
    tab.wait_for_load_state("networkidle")
    found = tab.locator('table[data-dimension="goals"]').evaluate_all(HEADINGS)
    assert found == [], "\n".join(found)
    for panel in ("Pages", "Sources", "Devices"):
        heading = tab.get_by_role("heading", name=panel, exact=True)
        for button in tab.locator(".report-panel", has=heading).locator(".segmented button").all():
            button.click()
            # The tab's rows come by a request of their own (a load state returns at once after the load).
            expect(tab.locator('.report-panel[aria-busy="true"]')).to_have_count(0)
            found = tab.locator(".report-panel table").evaluate_all(HEADINGS)
            assert found == [], "\n".join(found)
    tab.get_by_role("button", name="Top pages", exact=True).click()
    tab.get_by_role("button", name="Details: all top pages").click()
    dialog = tab.get_by_role("dialog")
    expect(dialog.locator("tbody tr").first).to_be_visible()
    found = dialog.locator("table").evaluate_all(HEADINGS)
    assert found == [], "\n".join(found)
    console.shoot(tab, f"reports-headings-{scheme}-phone")


def test_the_pages_table_draws_its_bars_by_the_pageviews_it_ranks_by(
    console: Console, console_server: LiveServer
) -> None:
    """/reread: one visitor, five pageviews; /glance: three visitors, one pageview each."""
    tab = console.signed_in()
    site = console.api(tab, "POST", "/api/sites", {"name": "Bars", "domain": unique("bars") + ".example.com"})
    assert isinstance(site, dict)
    at = datetime.now(UTC) - timedelta(seconds=40)
    rows = [helpers.pageview(site["id"], at + timedelta(seconds=i), "fan", "/reread") for i in range(5)]
    rows += [helpers.pageview(site["id"], at, f"passer-{n}", "/glance") for n in range(3)]
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    with console_server.client() as client:
        client.post(
            "/api/login", json={"email": "owner@example.com", "password": "correct horse battery staple"}
        )
        helpers.wait_caught_up(client)
    tab.goto(f"/sites/{site['id']}/reports?range=today")
    table = tab.locator('.report-panel table[data-dimension="page"]')
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr").first.locator("th")).to_contain_text("/reread")
    widths = table.locator(".report-bar").evaluate_all(
        "bars => bars.map(b => b.getBoundingClientRect().width)"
    )
    assert abs(widths[1] / widths[0] - 3 / 5) < 0.02, widths
    expect(table.locator("tbody tr").first.locator("td.report-share")).to_have_text("63%")  # 5 of 8 pageviews
