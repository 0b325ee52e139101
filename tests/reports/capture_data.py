"""Autocapture's events for the reports tests: visits of pageviews, each page maybe followed by
engagement, web vitals, a 404, an outbound click or a download; and the web-vitals arithmetic the
reports are checked against (computed here, without code of ``sightline.reports``)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.reports import helpers
from tests.reports.helpers import Event

NOW = datetime.now(UTC).replace(microsecond=0)
SPAN = (NOW - timedelta(days=4), NOW + timedelta(hours=1))
LINKS = ["https://github.com/x", "https://example.org/a?b=1", "http://news.example/"]
FILES = ["https://cdn.example.com/report.pdf", "https://cdn.example.com/app.zip"]
SELECTORS = ["html>body>main>button#buy", "html>body>nav>a:nth-of-type(2)", "#hero>img"]
MISSING = ["/old-post", "/typo", "/gone/deep"]
# (good up to, poor above): what the SDK's web-vitals library rates by.
LIMITS = {
    "LCP": (2500, 4000),
    "INP": (200, 500),
    "CLS": (0.1, 0.25),
    "FCP": (1800, 3000),
    "TTFB": (800, 1800),
}


def rated(name: str, value: float) -> str:
    good, poor = LIMITS[name]
    return "good" if value <= good else "poor" if value > poor else "needs-improvement"


def seed(site: int, seed: int = 3) -> list[Event]:
    """Visits of pageviews, each page maybe followed by engagement, web vitals, a 404, link clicks."""
    rng = random.Random(seed)
    base = helpers.generate(site, NOW - timedelta(hours=2), visits=120, days=3, seed=seed)
    out: list[Event] = []
    for visit in helpers.visits_of(base):
        at = visit.start
        first = visit.events[0]
        for i in range(rng.choice([1, 1, 2, 3])):
            missing = rng.random() < 0.2
            path = rng.choice(MISSING) if missing else rng.choice(helpers.PAGES)
            view = replace(first, time=at, name="pageview", path=path, props={})
            if i:
                view.referrer_source = None
            out.append(view)
            extra: list[tuple[str, dict[str, Any]]] = []
            if missing:
                extra.append(("404", {"path": path}))
            for _ in range(rng.choice([0, 1, 1, 2])):
                extra.append(
                    ("engagement", {"seconds": rng.randrange(0, 400), "scroll": rng.randrange(0, 101)})
                )
            for name in rng.sample(list(LIMITS), rng.randrange(0, 4)):
                value = round(rng.uniform(0, 0.5), 3) if name == "CLS" else rng.randrange(10, 6000)
                extra.append(("web_vital", {"name": name, "value": value, "rating": rated(name, value)}))
            if rng.random() < 0.2:
                extra.append(("outbound_link", {"url": rng.choice(LINKS)}))
            if rng.random() < 0.15:
                extra.append(("file_download", {"url": rng.choice(FILES)}))
            if rng.random() < 0.4:
                clicks = rng.randrange(1, 6)
                click = {"selector": rng.choice(SELECTORS), "x": 0.5, "y": 0.25, "viewport": "desktop"}
                extra.append(
                    (
                        "heatmap_click",
                        {**click, "clicks": clicks, "rage": clicks >= 3, "dead": rng.random() < 0.3},
                    )
                )
            for n, (name, props) in enumerate(extra):
                out.append(replace(view, time=at + timedelta(seconds=n + 1), name=name, props=props))
            at += timedelta(seconds=rng.randrange(30, 300))
    return out


def p75(values: list[float]) -> float:
    """The 75th percentile, linearly interpolated between the closest ranks."""
    ordered = sorted(values)
    at = 0.75 * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)
