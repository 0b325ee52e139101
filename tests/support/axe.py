"""axe-core (ui/'s dev dependency, installed by ``npm ci``) run inside a page: accessibility checks.

The script is evaluated through the DevTools protocol, so the console's Content-Security-Policy
(no inline scripts) does not have to be loosened for it.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from tests.support.browser import ROOT

AXE = ROOT / "ui" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
SERIOUS = ("serious", "critical")


def violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations of the page as it is now."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    # From the top of the page: scrolled, the sticky top bar covers whatever passes under it, and
    # axe would call a control there too small to touch (target-size) by where the test scrolled.
    position = page.evaluate("[scrollX, scrollY]")
    page.evaluate("scrollTo(0, 0)")
    try:
        result: dict[str, Any] = page.evaluate(
            "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
            TAGS,
        )
    finally:
        page.evaluate("([x, y]) => scrollTo(x, y)", position)
    return [v for v in result["violations"] if v["impact"] in SERIOUS]


def describe(found: list[dict[str, Any]]) -> str:
    lines = []
    for violation in found:
        targets = [" ".join(map(str, node["target"])) for node in violation["nodes"][:5]]
        summary = violation["nodes"][0].get("failureSummary", "").replace("\n", " ")
        lines.append(
            f"{violation['id']} ({violation['impact']}): {violation['help']} at {targets}: {summary}"
        )
    return "\n".join(lines)


def assert_accessible(page: Page, where: str) -> None:
    found = violations(page)
    assert found == [], f"axe-core on {where}:\n{describe(found)}"
