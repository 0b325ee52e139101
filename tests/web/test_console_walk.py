"""Every console route, walked as an owner and as a viewer, at 390 and 1280 px in both themes.

One server, one browser, one tab per role: each route loads once and is then shown in the four
looks (``show``). In each look the page must have no sideways scroll, no text drawn over other
text or broken inside a word, no control past the edge of its panel, no label crowding its field, no
raw value (``None``, an ISO timestamp), no serious axe-core contrast violation, and (for a viewer) no
enabled control that changes anything. Every look is saved in ``test-artifacts/console-walk/``
(role-route-theme-size.png), so a reviewer can look through all of them at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, sign_in
from tests.imports.helpers import csv_text, imported
from tests.recordings.helpers import RecordingSite, chunk, new_recording_id, page_events, post_chunk
from tests.reports import helpers
from tests.support.axe import AXE, SERIOUS
from tests.support.server import LiveServer, create_owner
from tests.support.team import MEMBER_PASSWORD, token_of
from tests.surveys.helpers import QUESTIONS
from tests.web.conftest import Console, show

WALK = Path(__file__).resolve().parents[2] / "test-artifacts" / "console-walk"
LOOKS = [
    ("light", "phone", {"width": 390, "height": 844}),
    ("dark", "phone", {"width": 390, "height": 844}),
    ("light", "desktop", {"width": 1280, "height": 860}),
    ("dark", "desktop", {"width": 1280, "height": 860}),
]
# A control whose name says it changes something: a viewer must not find one enabled. Filters,
# periods and views only change the address, so they are anyone's.
CHANGING = re.compile(
    r"^(add|delete|erase|rename|save|publish|archive|import|invite|create|revoke|upload|check connection|"
    r"new survey|change|turn|copy link|make|remove|keep|apply to|send|manage)\b",
    re.IGNORECASE,
)
FREE = re.compile(r"filter|sign out|theme|a step|remove step", re.IGNORECASE)

# The values in the reports' breakdowns (a path, a referrer's domain: a narrow column must break
# them somewhere): the check of unbroken addresses passes over them; they are checked for breaks
# at their slashes and dots only (``midword``).
ELSEWHERE = ".report-table .link-button"

# Runs in the page: what is wrong with the look shown now.
PROBLEMS = """
({ viewer, changing, free, elsewhere }) => {
  const doc = document.documentElement;
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  const out = {
    overflow: [], overlaps: [], broken: [], misaligned: [], spilled: [], raw: [], crowded: [], controls: [],
    wide: [], cut: [], split: [], midword: [],
  };
  // On a phone a table's rows fit its panel (stacked as cards): none scrolls sideways inside it.
  if (innerWidth < 640) {
    for (const t of document.querySelectorAll(`main .panel table:not(${elsewhere})`)) {
      const panel = t.closest('.panel'), r = t.getBoundingClientRect();
      if (r.width < 1 || t.closest('.visually-hidden, [hidden]') || out.wide.length >= 5) continue;
      const inner = panel.clientWidth - parseFloat(getComputedStyle(panel).paddingLeft)
        - parseFloat(getComputedStyle(panel).paddingRight);
      const what = `${name(t)} is ${Math.round(r.width)} px wide in ${Math.round(inner)} px`;
      if (r.width > inner + 1) out.wide.push(what);
    }
  }
  // A strip of tabs shows every tab whole: none hides past the strip's edge.
  for (const strip of document.querySelectorAll('main .segmented, main [role=tablist]')) {
    const s = strip.getBoundingClientRect();
    if (s.width < 1 || out.cut.length >= 5) continue;
    for (const b of strip.querySelectorAll('button, a, [role=tab]')) {
      const r = b.getBoundingClientRect();
      const hidden = r.right > s.right + 1 || r.left < s.left - 1;
      if (r.width > 0 && hidden) out.cut.push(`"${b.innerText.trim()}" in ${name(strip)}`);
    }
  }
  // A control reaching past the edge of its panel is cut off or drawn over the border, unless a
  // strip between them scrolls sideways on purpose.
  const inPanels = 'main .panel button, main .panel a, main .panel input, main .panel select';
  for (const e of document.querySelectorAll(inPanels)) {
    const panel = e.closest('.panel'), r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || e.closest('[hidden], dialog:not([open])')) continue;
    let scrolls = false;
    for (let a = e.parentElement; a && !scrolls; a = a === panel ? null : a.parentElement) {
      scrolls = /(auto|scroll)/.test(getComputedStyle(a).overflowX);
    }
    const edge = panel.getBoundingClientRect().right - parseFloat(getComputedStyle(panel).borderRightWidth);
    if (!scrolls && r.right > edge + 1 && out.spilled.length < 5) {
      const what = `${name(e)} "${(e.innerText || e.value || '').trim().slice(0, 30)}"`;
      const where = `${Math.round(r.right)} px, past ${name(panel)} at ${Math.round(edge)} px`;
      out.spilled.push(`${what} reaches ${where}`);
    }
  }
  // Panels side by side in one grid row start at the same height.
  for (const grid of document.querySelectorAll('main *')) {
    if (getComputedStyle(grid).display !== 'grid') continue;
    const panels = [...grid.children].filter((e) => e.classList.contains('panel'));
    for (let i = 1; i < panels.length; i++) {
      const a = panels[i - 1].getBoundingClientRect(), b = panels[i].getBoundingClientRect();
      const apart = Math.abs(a.top - b.top);
      if (b.left >= a.right - 1 && apart > 1 && apart < 40) {
        out.misaligned.push(`${name(panels[i])} sits ${Math.round(apart)} px off ${name(panels[i - 1])}`);
      }
    }
  }
  // A label's words and its field drawn over one another (a field's focus ring reaches 3 px out).
  for (const label of document.querySelectorAll('main label')) {
    const field = label.querySelector('input, select, textarea');
    const words = [...label.childNodes].find((n) => n.nodeType === 3 && n.textContent.trim());
    if (!field || !words || out.crowded.length >= 5) continue;
    const range = document.createRange();
    range.selectNodeContents(words);
    const t = range.getBoundingClientRect(), f = field.getBoundingClientRect();
    if (f.width < 1 || t.width < 1) continue;
    const apart = Math.max(f.left - t.right, t.left - f.right, f.top - t.bottom, t.top - f.bottom);
    if (apart < 4) out.crowded.push(`"${words.textContent.trim()}" ${Math.round(apart)} px from its field`);
  }
  if (doc.scrollWidth > innerWidth + 1) {
    out.overflow = [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > doc.clientWidth + 1)
      .slice(-5).map((e) => `${name(e)} reaches ${Math.round(e.getBoundingClientRect().right)} px`);
    out.overflow.unshift(`the page is ${doc.scrollWidth} px wide in ${innerWidth} px`);
  }
  // Lines of text as drawn (a text node's line boxes), never those hidden or inside a closed menu,
  // nor those kept for screen readers only (clipped away).
  const clipped = new Map();
  const isClipped = (e) => {
    if (!e || e === document.body) return false;
    if (!clipped.has(e)) {
      const s = getComputedStyle(e);
      clipped.set(e, s.clipPath !== 'none' || (s.clip && s.clip !== 'auto') || isClipped(e.parentElement));
    }
    return clipped.get(e);
  };
  const lines = [];
  const measure = document.createElement('canvas').getContext('2d');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const parent = node.parentElement;
    if (!parent || parent.closest('select, option, script, style, .visually-hidden, [hidden]')) continue;
    if (isClipped(parent)) continue;
    const style = getComputedStyle(parent);
    if (style.visibility !== 'visible' || Number(style.opacity) === 0) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    // A value as the program holds it, where a reader expects words or a date.
    const text = node.textContent.trim();
    const raw = /^(None|null|undefined|NaN)$|\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d|^\\d{4}-\\d\\d-\\d\\d$/;
    if (raw.test(text) && out.raw.length < 5) {
      out.raw.push(`"${text.slice(0, 40)}" in ${name(parent)}`);
    }
    const drawn = [...range.getClientRects()].filter((r) => r.width > 1 && r.height > 1);
    // Plain words drawn on more lines than they have words ("Convers" / "ions", "Wa" / "lk shop"):
    // a column too narrow for them.
    const tops = new Set(drawn.map((r) => Math.round(r.top)));
    if (/^[A-Za-z]{1,24}( [A-Za-z]{1,24})*$/.test(text) && tops.size > text.split(' ').length) {
      out.broken = (out.broken || []).concat(`"${node.textContent.trim()}" in ${name(parent)}`).slice(0, 5);
    }
    // An address or a domain broken over lines although its line had room for it whole.
    const address = /^[^\\s@]+@[^\\s@]+$|^[a-z0-9-]+(\\.[a-z0-9-]+)+$/i;
    const alone = parent.textContent.trim() === text && !parent.closest(elsewhere);
    if (address.test(text) && alone && tops.size > 1 && out.split.length < 5) {
      const box = parent.closest('.panel, main') || parent, boxStyle = getComputedStyle(box);
      const room = box.clientWidth - parseFloat(boxStyle.paddingLeft) - parseFloat(boxStyle.paddingRight);
      measure.font = style.font;
      if (measure.measureText(text).width <= room) out.split.push(`"${text}" in ${name(parent)}`);
    }
    // A report's value (a path, a referrer's domain) wraps at a slash, a dot, a space or a hyphen,
    // never inside a word ("news.ycombinat" / "or.com"): each line after the first begins there.
    if (tops.size > 1 && parent.closest('.report-table .report-value') && out.midword.length < 5) {
      const all = node.textContent, one = document.createRange();
      let top = null;
      for (let i = 0; i < all.length; i++) {
        one.setStart(node, i); one.setEnd(node, i + 1);
        const r = [...one.getClientRects()].find((c) => c.width > 0);
        if (!r) continue;
        if (top !== null && r.top > top + 1 && !/[.?&#]/.test(all[i]) && !/[\\/@\\s-]/.test(all[i - 1])) {
          out.midword.push(`"${all.trim()}" in ${name(parent)} breaks before "${all.slice(i, i + 8)}"`);
          break;
        }
        top = r.top;
      }
    }
    for (const r of range.getClientRects()) {
      if (r.width > 1 && r.height > 1) lines.push({ r, parent, text: node.textContent.trim().slice(0, 40) });
    }
  }
  for (let i = 0; i < lines.length && out.overlaps.length < 5; i++) {
    for (let j = i + 1; j < lines.length; j++) {
      const a = lines[i].r, b = lines[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 2 && h > Math.min(a.height, b.height) / 2 && lines[i].parent !== lines[j].parent) {
        out.overlaps.push(`"${lines[i].text}" over "${lines[j].text}"`);
        break;
      }
    }
  }
  if (viewer) {
    const changeWords = new RegExp(changing, 'i'), freeWords = new RegExp(free, 'i');
    const controls = 'main button, main [role=switch], main input[type=file], main a.button';
    for (const e of document.querySelectorAll(controls)) {
      const r = e.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || e.matches(':disabled')) continue;
      if (e.closest('[hidden], dialog:not([open]), [data-anyone]')) continue;
      const label = (e.getAttribute('aria-label') || e.innerText || e.value || '').trim();
      const named = changeWords.test(label) && !freeWords.test(label);
      if (e.matches('[role=switch], input[type=file]') || named) {
        out.controls.push(`${name(e)} "${label}"`);
      }
    }
  }
  return out;
}
"""


@pytest.fixture(scope="module")
def walk_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("walk")
    server = LiveServer(directory / "data", database_url_for(request, "sqlite", directory))
    server.start()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    yield server
    server.stop()


def _viewer_tab(console: Console, owner: Page) -> Page:
    """A tab of a viewer of every site, who joined through an invitation link."""
    invitation = console.api(
        owner, "POST", "/api/invitations", {"email": "viewer@example.com", "role": "viewer"}
    )
    assert isinstance(invitation, dict)
    tab = console.page()
    accepted = tab.context.request.post(
        "/api/invitations/accept",
        data={"token": token_of(str(invitation["url"])), "password": MEMBER_PASSWORD},
        headers={"Origin": console.server.origin},
    )
    assert accepted.ok, accepted.text()
    return tab


def _seed(console: Console, owner: Page, server: LiveServer) -> dict[str, Any]:
    site = console.api(owner, "POST", "/api/sites", {"name": "Walk shop", "domain": "walk-shop.example.com"})
    assert isinstance(site, dict)
    site_id = int(site["id"])
    now = datetime.now(UTC)
    rows = helpers.generate(site_id, now - timedelta(minutes=10), visits=150, days=10, seed=29)
    rows += [  # purchases worth revenue, for the Goals panel's money columns
        replace(
            helpers.pageview(site_id, now - timedelta(minutes=5 + n), f"buyer-{n}", "/checkout"),
            name="purchase",
            props={"amount": 74.0 * (1 + n % 2)},
        )
        for n in range(3)
    ]
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    console.api(
        owner,
        "POST",
        f"/api/sites/{site_id}/goals",
        {"name": "Pricing viewed", "kind": "page", "match": "exact", "path": "/pricing"},
    )
    purchase = {"name": "Purchase", "kind": "event", "event": "purchase"}
    revenue = {"revenue": {"prop": "amount", "currency": "USD"}}
    console.api(owner, "POST", f"/api/sites/{site_id}/goals", {**purchase, **revenue})
    # A team with a member invited, an API key and a shared link: their tables have rows.
    console.api(
        owner,
        "POST",
        "/api/invitations",
        {"email": "an.admin.with.a.long.address@example.com", "role": "admin"},
    )
    console.api(owner, "POST", "/api/keys", {"name": "Reporting dashboard", "site_id": site_id})
    console.api(owner, "POST", f"/api/sites/{site_id}/shares", {})
    survey = console.api(
        owner,
        "POST",
        "/api/feedback/surveys",
        {"site_id": site_id, "name": "Walk survey", "questions": QUESTIONS},
    )
    assert isinstance(survey, dict)
    console.api(owner, "POST", f"/api/feedback/surveys/{survey['id']}/publish", {})
    # A recording of one visit: the player page has a recording to show.
    console.api(owner, "PATCH", f"/api/sites/{site_id}", {"recording_enabled": True})
    recording = new_recording_id()
    start = int(now.timestamp() * 1000) - 60_000
    target = RecordingSite(site_id, str(site["key"]), "https://walk-shop.example.com")
    events = page_events(start, href=target.origin + "/", text="Walk shop")
    posted = post_chunk(server, target, recording, 0, chunk(events))
    assert posted.status_code == 202, posted.text
    client = sign_in(server)
    try:
        helpers.wait_caught_up(client)
        # Imported history before the collected days: the imported-figures badges show.
        first = (now - timedelta(days=40)).date()
        days = [(first + timedelta(days=n)).isoformat() for n in range(20)]
        figures = csv_text(["date", "visitors", "visits", "pageviews"], [(d, 30, 40, 90) for d in days])
        imported(client, site_id, "history.csv", figures.encode())
    finally:
        client.close()
    return {"site": site_id, "survey": int(survey["id"]), "recording": recording}


def _routes(ids: dict[str, Any], role: str) -> list[str]:
    site, survey = ids["site"], ids["survey"]
    routes = [
        "/sites",
        "/overview?range=30d",
        f"/sites/{site}",
        f"/sites/{site}/settings",
        f"/sites/{site}/reports",
        f"/sites/{site}/reports?range=30d",
        f"/sites/{site}/reports?range=realtime",
        f"/sites/{site}/realtime",
        f"/sites/{site}/conversions",
        f"/sites/{site}/heatmap?path=/",
        "/reports",
        f"/recordings?site={site}",
        f"/recordings/{ids['recording']}",
        f"/surveys?site={site}",
        f"/surveys/{survey}",
        f"/surveys/{survey}/responses",
        "/health",
        "/no/such/page",
    ]
    if role == "owner":
        routes += [f"/surveys/new?site={site}", "/team", "/team/keys"]
    return routes


def _act(tab: Page, route: str) -> None:
    """What a member does on the route before it is looked at: on the conversions page, a funnel is
    shown and named (its answer brings the controls that keep it)."""
    if route.endswith("/conversions"):
        tab.get_by_label("Step 2", exact=True).fill("/pricing")
        tab.get_by_role("button", name="Show the funnel").click()
        tab.locator(".funnel-chart").first.wait_for()
        # A name typed to keep the funnel: "Save the funnel" is enabled for whoever may see it.
        save_as = tab.get_by_label("Save as")
        if save_as.count():
            save_as.fill("Walk funnel")


def _slug(route: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", route.lower()).strip("-") or "home"


def _contrast(tab: Page) -> list[str]:
    if not tab.evaluate("typeof window.axe === 'object'"):
        tab.evaluate(AXE.read_text(encoding="utf-8"))
    result: dict[str, Any] = tab.evaluate(
        "() => axe.run(document, {runOnly: {type: 'rule', values: ['color-contrast']},"
        " resultTypes: ['violations'], iframes: false})"
    )
    return [
        f"{' '.join(map(str, node['target']))}: {node.get('failureSummary', '').splitlines()[-1].strip()}"
        for violation in result["violations"]
        if violation["impact"] in SERIOUS
        for node in violation["nodes"][:5]
    ]


@pytest.mark.timeout(1200)  # 37 routes in four looks each
def test_every_console_route_reads_well_on_a_phone_and_a_desktop_in_both_themes_for_each_role(
    browser: Browser, walk_server: LiveServer
) -> None:
    console = Console(browser, walk_server)
    WALK.mkdir(parents=True, exist_ok=True)
    for old in WALK.glob("*.png"):
        old.unlink()
    problems: list[str] = []
    try:
        owner = console.signed_in()
        ids = _seed(console, owner, walk_server)
        viewer = _viewer_tab(console, owner)
        for role, tab in (("owner", owner), ("viewer", viewer)):
            for route in _routes(ids, role):
                tab.goto(route)
                tab.wait_for_load_state("networkidle")
                tab.locator("h1").first.wait_for()
                _act(tab, route)
                for scheme, size, viewport in LOOKS:
                    show(tab, scheme, viewport)
                    found = tab.evaluate(
                        PROBLEMS,
                        {
                            "viewer": role == "viewer",
                            "changing": CHANGING.pattern,
                            "free": FREE.pattern,
                            "elsewhere": ELSEWHERE,
                        },
                    )
                    found["contrast"] = _contrast(tab)
                    where = f"{role} {route} {scheme} {size}"
                    problems += [
                        f"{where}: {kind}: {item}" for kind, items in found.items() for item in items
                    ]
                    tab.screenshot(
                        path=str(WALK / f"{role}-{_slug(route)}-{scheme}-{size}.png"), full_page=True
                    )
    finally:
        console.close()
    assert console.errors == [], f"page errors: {console.errors}"
    assert problems == [], f"{len(problems)} problems:\n" + "\n".join(problems[:80])
