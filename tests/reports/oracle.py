"""The conversion reports computed independently from raw events: goals, filters on every
dimension, funnels. Plain Python over the very rows the tests inserted, following docs/reports.md,
without any code of ``sightline.reports`` (channels read the lists of ``sightline.channels``, the
one table of their rules, in plain Python here)."""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from sightline import channels
from tests.reports.helpers import Event, Visit, visits_of

Span = tuple[datetime, datetime]


def path_matches(match: str, rule: str, path: str) -> bool:
    if match == "exact":
        return path == rule
    if match == "prefix":
        return path.startswith(rule)
    pattern = ""
    i = 0
    while i < len(rule):
        if rule.startswith("**", i):
            pattern, i = pattern + ".*", i + 2
        elif rule[i] == "*":
            pattern, i = pattern + "[^/]*", i + 1
        else:
            pattern, i = pattern + re.escape(rule[i]), i + 1
    return re.fullmatch(pattern, path, re.DOTALL) is not None


def converts(goal: Mapping[str, Any], e: Event) -> bool:
    if goal["kind"] == "page":
        return e.name == "pageview" and path_matches(goal["match"], goal["path"], e.path)
    if e.name != goal["event"]:
        return False
    prop = goal.get("prop")
    return prop is None or str_of(e.props.get(prop["key"])) == prop["value"]


def str_of(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def amount(goal: Mapping[str, Any], e: Event) -> Decimal | None:
    """A revenue amount as docs/reports.md reads it: the prop's number to the millionth."""
    value = e.props.get(goal["revenue"]["prop"])
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    return number.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)


def _cents(number: Decimal) -> float:
    return float(number.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def channel_of(source: str, utm_source: str | None, utm_medium: str | None) -> str:
    """docs/reports.md's channel table, rule by rule: the first that holds names the channel."""
    s, u, m = source.lower(), (utm_source or "").lower(), (utm_medium or "").lower()

    def named(names: tuple[str, ...]) -> bool:
        return s in names or u in names

    paid = m in channels.PAID_MEDIUMS or "cp" in m or m.startswith("paid")
    if named(channels.AI_ASSISTANTS):
        return "ai_assistants"
    if m in channels.PAID_SOCIAL_MEDIUMS or (paid and named(channels.SOCIAL_NETWORKS)):
        return "paid_social"
    if paid:
        return "paid_search"
    if named(channels.EMAIL_SOURCES) or m in channels.EMAIL_MEDIUMS:
        return "email"
    if named(channels.SOCIAL_NETWORKS) or m in channels.SOCIAL_MEDIUMS:
        return "organic_social"
    if named(channels.SEARCH_ENGINES) or m == "organic":
        return "organic_search"
    if s == "(none)" and not m:
        return "direct"
    return "referral"


def channel(v: Visit) -> str:
    first = min(v.events, key=lambda e: e.time)
    return channel_of(v.source, first.utm_source, first.utm_medium)


def _attribute(v: Visit, name: str) -> str:
    first = min(v.events, key=lambda e: e.time)
    views = v.pageviews
    if name == "channel":
        return channel(v)
    return {
        "source": v.source,
        "utm_source": first.utm_source or "",
        "utm_medium": first.utm_medium or "",
        "utm_campaign": first.utm_campaign or "",
        "browser": first.browser,
        "os": first.os,
        "device": first.device_type,
        "entry_page": views[0].path if views else "",
        "exit_page": views[-1].path if views else "",
    }[name]


def _test(op: str, actual: str, wanted: str) -> bool:
    if op == "!":
        return actual != wanted
    if op == "~":
        return wanted.lower() in actual.lower()
    return actual == wanted


def visit_passes(v: Visit, filters: Mapping[str, str], goals: Mapping[int, Mapping[str, Any]]) -> bool:
    for name, raw in filters.items():
        op = raw[0] if raw[:1] in ("!", "~") else ""
        value = raw[len(op) :]
        if name in ("page", "event", "goal", "prop"):
            if name == "page":
                hits = [e for e in v.pageviews if _test("~" if op == "~" else "", e.path, value)]
            elif name == "event":
                customs = [e for e in v.events if e.name != "pageview"]
                hits = [e for e in customs if _test("~" if op == "~" else "", e.name, value)]
            elif name == "goal":
                hits = [e for e in v.events if converts(goals[int(value)], e)]
            else:
                key, _, text = value.partition(":")
                hits = [e for e in v.events if str_of(e.props.get(key)) == text]
            if bool(hits) == (op == "!"):
                return False
        elif not _test(op, _attribute(v, name), value):
            return False
    return True


def chosen_visits(
    rows: list[Event], span: Span, filters: Mapping[str, str], goals: Mapping[int, Mapping[str, Any]]
) -> list[Visit]:
    return [v for v in visits_of(rows) if span[0] <= v.start < span[1] and visit_passes(v, filters, goals)]


def counted_events(
    rows: list[Event], span: Span, filters: Mapping[str, str], goals: Mapping[int, Mapping[str, Any]]
) -> list[Event]:
    """Without filters the span's events; with filters every event of the selected visits."""
    if not filters:
        return [e for e in rows if span[0] <= e.time < span[1]]
    return [e for v in chosen_visits(rows, span, filters, goals) for e in v.events]


def expected_goals(
    rows: list[Event], span: Span, goals: Mapping[int, Mapping[str, Any]], filters: Mapping[str, str]
) -> dict[int, dict[str, Any]]:
    events = counted_events(rows, span, filters, goals)
    everyone = len({e.visitor_id for e in events})
    out: dict[int, dict[str, Any]] = {}
    for goal_id, goal in goals.items():
        hits = [e for e in events if converts(goal, e)]
        people = len({e.visitor_id for e in hits})
        row: dict[str, Any] = {
            "goal_id": goal_id,
            "value": goal["name"],
            "visitors": people,
            "conversions": len(hits),
            "conversion_rate": round(people / everyone, 4) if everyone else 0.0,
        }
        if goal.get("revenue"):
            amounts = [a for a in (amount(goal, e) for e in hits) if a is not None]
            row["revenue"] = {
                "total": _cents(sum(amounts, Decimal(0))),
                "average": _cents(sum(amounts, Decimal(0)) / len(amounts)) if amounts else 0.0,
                "currency": goal["revenue"]["currency"],
            }
        out[goal_id] = row
    return out


def step_matches(step: str, e: Event) -> bool:
    kind, _, value = step.partition(":")
    if kind == "page":
        return e.name == "pageview" and path_matches("glob" if "*" in value else "exact", value, e.path)
    return e.name != "pageview" and e.name == value


def _ordered(v: Visit) -> list[Event]:
    return sorted(v.events, key=lambda e: e.time)  # stable: the log's order among equal times


def expected_funnel(visits: list[Visit], steps: list[str]) -> list[dict[str, Any]]:
    reached: list[set[str]] = [set() for _ in steps]
    gaps: list[list[float]] = [[] for _ in steps]
    for v in visits:
        before: datetime | None = None
        for k, step in enumerate(steps):
            hit = next(
                (e for e in _ordered(v) if step_matches(step, e) and (before is None or e.time > before)),
                None,
            )
            if hit is None:
                break
            reached[k].add(v.visitor_id)
            if before is not None:
                gaps[k].append((hit.time - before).total_seconds())
            before = hit.time
    out = []
    first = len(reached[0])
    for k, step in enumerate(steps):
        people = len(reached[k])
        previous = len(reached[k - 1]) if k else people
        out.append(
            {
                "label": step,
                "visitors": people,
                "conversion_rate": round(people / first, 4) if first else 0.0,
                "step_conversion_rate": round(people / previous, 4) if previous else 0.0,
                "dropoff": previous - people if k else 0,
                "median_seconds": round(statistics.median(gaps[k]), 1) if k and gaps[k] else None,
            }
        )
    return out


def label_of(e: Event) -> str:
    return f"page:{e.path}" if e.name == "pageview" else f"event:{e.name}"


def expected_journeys(
    visits: list[Visit], start: str, direction: str, depth: int
) -> dict[tuple[str, ...], int]:
    people: dict[tuple[str, ...], set[str]] = {}
    for v in visits:
        # The SDK's measurements (time on page, vitals, heatmap clicks) are never steps.
        events = [e for e in _ordered(v) if e.name not in ("engagement", "web_vital", "heatmap_click")]
        at = next((i for i, e in enumerate(events) if step_matches(start, e)), None)
        if at is None:
            continue
        if direction == "next":
            path = tuple(label_of(e) for e in events[at + 1 : at + 1 + depth])
        else:
            path = tuple(label_of(e) for e in reversed(events[max(0, at - depth) : at]))
        if path:
            people.setdefault(path, set()).add(v.visitor_id)
    return {path: len(who) for path, who in people.items()}


def expected_retention(
    rows: list[Event],
    chosen: list[Visit],
    zone: str,
    first_day: Any,
    last_day: Any,
    interval: str,
    periods: int,
    now: datetime,
) -> list[dict[str, Any]]:
    """Cohorts by the local day or week (from ``first_day``) of each visitor's first visit ever."""
    from datetime import timedelta
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(zone)
    step = 7 if interval == "week" else 1

    def index(moment: datetime) -> int:
        days: int = (moment.astimezone(tz).date() - first_day).days
        return days // step

    firsts: dict[str, datetime] = {}
    for v in visits_of(rows):
        firsts[v.visitor_id] = min(firsts.get(v.visitor_id, v.start), v.start)
    cohorts = ((last_day - first_day).days + step) // step
    limit = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    elapsed = 0
    for n in range(cohorts + periods - 1):
        day = first_day + timedelta(days=n * step)
        if datetime(day.year, day.month, day.day, tzinfo=tz) >= limit:
            break
        elapsed += 1
    seen: dict[tuple[int, int], set[str]] = {}
    for v in chosen:
        c = index(firsts[v.visitor_id])
        if 0 <= c < cohorts and firsts[v.visitor_id].astimezone(tz).date() >= first_day:
            seen.setdefault((c, index(v.start) - c), set()).add(v.visitor_id)
    out = []
    for c in range(cohorts):
        size = len(seen.get((c, 0), set()))
        shown = min(periods, max(0, elapsed - c))
        out.append(
            {
                "start": (first_day + timedelta(days=c * step)).isoformat(),
                "visitors": size,
                "returning": [
                    round(len(seen.get((c, i), set())) / size, 4) if size else 0.0 for i in range(shown)
                ],
            }
        )
    return out
