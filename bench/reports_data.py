"""Generates a site's traffic for the reports benchmark: millions of events straight into SQLite.

Visits are drawn with numpy (start times with a daily rhythm over ``days`` days, 1 to 8 events
each, returning visitors, 40 sources, a few UTM campaigns, 12 browser/OS/device mixes, 400 pages
with a long tail, 15 % custom events with props), sorted by time like real traffic, and written
with ``sqlite3.executemany`` in transactions of 200,000 rows (synchronous=OFF while generating:
this is a throwaway benchmark database). ``python -m bench.reports_data DB SITE_ID EVENTS``.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np

from sightline.database.tables.events import EVENT_COLUMNS

CHUNK = 200_000
PAGES = ["/", "/pricing", "/docs", "/signup", "/login"] + [f"/blog/post-{i}" for i in range(395)]
SOURCES = (
    [None] * 8
    + ["google.com"] * 6
    + ["bing.com", "duckduckgo.com", "news.ycombinator.com"]
    + [f"site{i}.example" for i in range(23)]
)
CAMPAIGNS = [("newsletter", "email", f"issue-{i}") for i in range(6)] + [
    ("twitter", "social", "launch"),
    ("google", "cpc", "brand"),
]
AGENTS = [
    ("Chrome", "Windows", "desktop"),
    ("Chrome", "macOS", "desktop"),
    ("Safari", "macOS", "desktop"),
    ("Firefox", "Windows", "desktop"),
    ("Firefox", "Linux", "desktop"),
    ("Edge", "Windows", "desktop"),
    ("Chrome Mobile", "Android", "mobile"),
    ("Mobile Safari", "iOS", "mobile"),
    ("Samsung Internet", "Android", "mobile"),
    ("Mobile Safari", "iOS", "tablet"),
    ("Chrome", "ChromeOS", "desktop"),
    ("Opera", "Windows", "desktop"),
]
COUNTRIES = ["US", "US", "US", "DE", "DE", "GB", "FR", "IN", "IN", "BR", "CA", "JP", "NL", "ES", "IT", "PL"]
CUSTOM = ["signup", "download", "play_video", "add_to_cart", "search"]
PROPS = [
    '{"plan":"free"}',
    '{"plan":"pro"}',
    '{"plan":"team","seats":5}',
    '{"format":"pdf"}',
    '{"format":"csv"}',
    '{"query_length":3}',
    None,
]


def _zipf(rng: np.random.Generator, values: int, size: int, exponent: float = 1.1) -> np.ndarray:
    weights = 1.0 / np.arange(1, values + 1) ** exponent
    return rng.choice(values, size=size, p=weights / weights.sum())


def generate(site_id: int, events: int, days: int, end: datetime, seed: int = 1) -> Iterator[list[tuple]]:  # type: ignore[type-arg]
    """Rows in EVENT_COLUMNS order, sorted by time, in chunks of ``CHUNK``."""
    rng = np.random.default_rng(seed)
    per_visit = rng.choice([1, 1, 1, 2, 2, 3, 4, 5, 6, 8], size=events)
    visits = int(np.searchsorted(np.cumsum(per_visit), events)) + 1
    per_visit = per_visit[:visits]
    per_visit[-1] -= int(per_visit.sum()) - events
    span = days * 86400
    hour_weight = 0.4 + np.sin(np.linspace(0, np.pi, 24)) ** 2  # quiet nights, busy afternoons
    day = rng.integers(0, days, size=visits)
    hour = rng.choice(24, size=visits, p=hour_weight / hour_weight.sum())
    start = end.timestamp() - span + day * 86400 + hour * 3600 + rng.integers(0, 3600, size=visits)
    visitor = (rng.random(visits) ** 2 * (visits * 0.35)).astype(np.int64)
    source = rng.integers(0, len(SOURCES), size=visits)
    campaign = np.where(rng.random(visits) < 0.12, rng.integers(0, len(CAMPAIGNS), size=visits), -1)
    agent = _zipf(rng, len(AGENTS), visits, 0.8)
    visit_of = np.repeat(np.arange(visits), per_visit)
    first = np.r_[0, np.cumsum(per_visit)[:-1]]
    index_in_visit = np.arange(events) - np.repeat(first, per_visit)
    gaps = rng.exponential(70.0, size=events)
    gaps[index_in_visit == 0] = 0.0
    offset = np.cumsum(gaps)
    offset -= np.repeat(offset[first], per_visit)
    at = np.minimum(start[visit_of] + offset, end.timestamp() - 1)
    custom = (index_in_visit > 0) & (rng.random(events) < 0.15)
    name = rng.integers(0, len(CUSTOM), size=events)
    page = _zipf(rng, len(PAGES), events)
    props = rng.integers(0, len(PROPS), size=events)
    order = np.argsort(at, kind="stable")
    stamps = np.char.replace(
        np.datetime_as_string((at[order] * 1e6).astype("datetime64[us]"), unit="us"), "T", " "
    )
    for lo in range(0, events, CHUNK):
        rows = []
        for position, event in enumerate(order[lo : lo + CHUNK].tolist()):
            visit = int(visit_of[event])
            campaign_index = int(campaign[visit])
            utm = CAMPAIGNS[campaign_index] if campaign_index >= 0 else (None, None, None)
            browser, os_name, device = AGENTS[int(agent[visit])]
            is_custom = bool(custom[event])
            rows.append(
                (
                    site_id,
                    str(stamps[lo + position]),
                    f"visitor-{int(visitor[visit])}",
                    f"visit-{visit}",
                    CUSTOM[int(name[event])] if is_custom else "pageview",
                    PAGES[int(page[event])],
                    SOURCES[int(source[visit])] if index_in_visit[event] == 0 else None,
                    None,
                    *utm,
                    None,
                    None,
                    browser,
                    os_name,
                    device,
                    None,
                    PROPS[int(props[event])] if is_custom else None,
                    "bench",
                    COUNTRIES[visit % len(COUNTRIES)],
                    None,
                    None,
                    None,  # language
                )
            )
        yield rows


def insert(path: str, site_id: int, events: int, days: int, end: datetime) -> float:
    """Writes the events into the SQLite file at ``path``; returns the seconds it took."""
    started = time.perf_counter()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous=OFF")
    columns = ", ".join(EVENT_COLUMNS)
    marks = ", ".join("?" for _ in EVENT_COLUMNS)
    statement = f"INSERT INTO events ({columns}) VALUES ({marks})"  # fixed column names
    for rows in generate(site_id, events, days, end):
        with conn:
            conn.executemany(statement, rows)
    conn.close()
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    path, site_id, events = argv[0], int(argv[1]), int(argv[2])
    seconds = insert(path, site_id, events, 60, datetime.now(UTC))
    print(f"{events} events in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
