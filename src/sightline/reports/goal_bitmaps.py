"""The Goals panel's figures where the store has a bitmap aggregate (DuckDB): two passes over the
span's events, neither grouped by visitor.

1. Tally: pageviews grouped by path, the goals' custom events by name (and, when a goal is
   narrowed by a prop, by which of those props they carry): per group its events and revenue
   amounts, and its goals (every goal's rule evaluated once per group, a few hundred rows, never
   per event). Conversions and revenue are sums over the groups; groups converting on the same
   goals form one class. Above the size threshold each custom event group also sets one bit per
   visitor in a bitmap of its own (a handful of groups): custom events are read once.
2. Reach: the converting pageviews again, each given its class by a join with the tally's groups,
   into one bitmap aggregate over ``class * size | (visitor & (size - 1))``: ``size`` bits per
   class, set by its visitors' keyed hashes. A goal's visitors are the union (OR) of its classes'
   (or groups') bitmaps, read by linear counting (``counting``).
The period's visitors (the rate's denominator) and pageviews are the dashboard summary's figures,
from its own query (``queries.totals``), run first: below ``counting.EXACT_BELOW`` pageviews (a
span's events are never fewer) the reach pass counts each goal's distinct visitors exactly, over
pageviews and custom events.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sightline.reports import counting, queries, rules
from sightline.reports.filters import Filters, Goal
from sightline.reports.queries import Query, Run, Span
from sightline.store.dialects import Dialect
from sightline.store.schema import PAGEVIEW

BITS = 62  # goals per mask column (a signed 64-bit integer)
MIN_BITS, MAX_BITS = 18, 23  # a class's bitmap: 32 KiB to 1 MiB
MAX_TOTAL = 1 << 27  # bits of all classes' bitmaps together (16 MiB); more classes: exact
VIEWED = f"name = '{PAGEVIEW}'"


@dataclass(frozen=True)
class Figures:
    """Per goal (in the order given): unique visitors, conversions, and revenue ``(total, counted)``
    (None for a goal without revenue); and the period's unique visitors."""

    visitors: list[int]
    conversions: list[int]
    revenue: list[tuple[float, int] | None]
    everyone: int


@dataclass(frozen=True)
class _Branch:
    """One kind of events: pageviews (grouped by ``path``) or the others (by ``name``)."""

    key: str
    where: str
    flags: list[str]  # per mask column: the bits of the prop goals these events can meet
    amounts: list[str]  # per revenue goal: its amount when the event converts on it, else NULL


def _viewed(goal: Goal) -> bool:
    """Whether ``goal`` converts on pageviews (else on custom events)."""
    return goal.kind == "page" or goal.event == PAGEVIEW


def _sum(parts: Sequence[tuple[int, str]]) -> str:
    if not parts:
        return "0"
    return " + ".join(f"(CASE WHEN {condition} THEN {bit} ELSE 0 END)" for bit, condition in parts)


def _branches(q: Query, goals: Sequence[Goal], amounts: bool) -> list[_Branch]:
    """Pageviews and the other events, with the flags of the prop goals each can meet and (when
    ``amounts``) each revenue goal's amount."""
    d = q.d
    columns = (len(goals) + BITS - 1) // BITS
    flags: dict[bool, list[list[tuple[int, str]]]] = {
        side: [[] for _ in range(columns)] for side in (True, False)
    }
    values: dict[bool, list[str]] = {True: [], False: []}
    for i, goal in enumerate(goals):
        viewed = _viewed(goal)
        if goal.prop_key is not None:  # depends on the event's props: a flag bit of its branch
            column, bit = divmod(i, BITS)
            flags[viewed][column].append((1 << bit, rules.goal_condition(d, q.bind, goal)))
        if amounts and goal.revenue_prop is not None:
            condition = rules.goal_condition(d, q.bind, goal)
            amount = f"CASE WHEN {condition} THEN {rules.prop_number(d, q.bind, goal.revenue_prop)} END"
            values[viewed].append(amount)
            values[not viewed].append("NULL")
    sent = f"name IN ({', '.join(q.bind(n) for n in _sent(goals))})" if _sent(goals) else "FALSE"
    return [
        _Branch("path", VIEWED, [_sum(f) for f in flags[True]], values[True]),
        _Branch("name", sent, [_sum(f) for f in flags[False]], values[False]),
    ]


def _masks(q: Query, goals: Sequence[Goal]) -> list[str]:
    """Per mask column, the goal bits of a group (``name``, ``path``, its flags ``f{c}``)."""
    static: list[list[tuple[int, str]]] = [[] for _ in range((len(goals) + BITS - 1) // BITS)]
    for i, goal in enumerate(goals):
        if goal.prop_key is None:
            column, bit = divmod(i, BITS)
            static[column].append((1 << bit, rules.goal_condition(q.d, q.bind, goal)))
    return [f"{_sum(parts)} + f{c}" for c, parts in enumerate(static)]


def _grouped(b: _Branch) -> list[str]:
    """The flag columns a branch's events differ by (none without a prop goal on them)."""
    return [f"f{c}" for c, f in enumerate(b.flags) if f != "0"]


def _tally(q: Query, branches: list[_Branch], masks: list[str], own: int) -> str:
    """Per group its events, revenue and goal masks; with ``own`` bits, also each custom event
    group's bitmap of visitors (NULL for pageviews)."""
    fs = [f"f{c}" for c in range(len(masks))]
    parts = []
    for b in branches:
        inner = [b.key, *(f"{f} AS f{c}" for c, f in enumerate(b.flags) if f != "0")]
        inner += [f"{a} AS a{k}" for k, a in enumerate(b.amounts) if a != "NULL"]
        name, path = (f"'{PAGEVIEW}'", "path") if b.key == "path" else ("name", "''")
        outer = [f"{name} AS name", f"{path} AS path"]
        outer += [f"f{c}" if f != "0" else f"0 AS f{c}" for c, f in enumerate(b.flags)]
        outer.append("count(*) AS n")
        outer += [
            f"sum(a{k}) AS r{k}, count(a{k}) AS k{k}" if a != "NULL" else f"NULL AS r{k}, 0 AS k{k}"
            for k, a in enumerate(b.amounts)
        ]
        if own and b.key == "name":
            inner.append("visitor")
            outer.append(f"bitstring_agg(visitor & {own - 1}, 0, {own - 1})::BLOB AS b")
        else:
            outer.append("NULL AS b")
        parts.append(
            f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM events "
            f"WHERE {q.events(b.where)}) AS x GROUP BY {', '.join([b.key, *_grouped(b)])}"
        )
    revenue = "".join(f", r{k}, k{k}" for k in range(len(branches[0].amounts)))
    ms = ", ".join(f"{m} AS m{c}" for c, m in enumerate(masks))
    return f"SELECT name, path, {', '.join(fs)}, n{revenue}, {ms}, b FROM ({' UNION ALL '.join(parts)}) AS t"


def _reach(q: Query, branches: list[_Branch], keys: list[list[tuple[Any, ...]]], aggregates: str) -> str:
    """``aggregates`` over every event with its value ``s`` from a join on the branch's key and
    flags with the tally's groups (``keys``: per branch, rows ``(key, *flags, s)``)."""
    parts = []
    for b, rows in zip(branches, keys, strict=True):
        if not rows:  # no such events
            continue
        fs = _grouped(b)
        columns = list(zip(*rows, strict=True))
        chosen = [0, *(1 + int(f[1:]) for f in fs)]
        names = [f"k_{b.key}", *(f"k_{f}" for f in fs)]
        table = ", ".join(
            f"unnest({q.bind(list(columns[i]))}) AS {n}" for i, n in zip(chosen, names, strict=True)
        )
        table += f", CAST(unnest({q.bind(list(columns[-1]))}) AS {q.d.uint64}) AS s"  # for a bit OR
        on = " AND ".join(f"{x} = k_{x}" for x in [b.key, *fs])
        inner = ", ".join(["visitor", b.key, *(f"{f} AS f{c}" for c, f in enumerate(b.flags) if f != "0")])
        parts.append(
            f"SELECT visitor, s FROM (SELECT {inner} FROM events WHERE {q.events(b.where)}) AS e "
            f"JOIN (SELECT {table}) AS k ON {on}"
        )
    return f"SELECT {aggregates} FROM ({' UNION ALL '.join(parts)}) AS x"


def _used(sql: str, values: dict[str, Any]) -> dict[str, Any]:
    """The bound values ``sql`` refers to (a branch with no events to read leaves its own out)."""
    return {name: value for name, value in values.items() if re.search(rf"\${name}\b", sql)}


def _bits(most: int) -> int:
    """A bitmap's size for at most ``most`` visitors: at most two per bit, within the bounds."""
    return 1 << min(MAX_BITS, max(MIN_BITS, (max(1, most // 2) - 1).bit_length()))


def _sent(goals: Sequence[Goal]) -> list[str]:
    """The names of the custom events goals convert on."""
    return sorted({g.event for g in goals if g.kind == "event" and g.event and g.event != PAGEVIEW})


def _groups(goals: Sequence[Goal]) -> int:
    """The most groups of goals' custom events the tally can make: per name, one per set of its
    prop goals an event can meet."""
    return sum(
        1 << min(30, sum(g.event == n and g.prop_key is not None for g in goals)) for n in _sent(goals)
    )


@dataclass
class _Tally:
    """What the tally found: per goal its conversions and revenue; the groups' classes (a goal
    mask -> its class) and each converting group's key with its class, per branch; and each
    custom event group's mask and bitmap (when the tally made them)."""

    conversions: list[int]
    revenue: list[tuple[float, int] | None]
    classes: dict[int, int]
    keys: list[list[tuple[Any, ...]]]
    bitmaps: list[tuple[int, int]]


def _read(rows: list[tuple[Any, ...]], goals: Sequence[Goal], columns: int, amounts: int) -> _Tally:
    found = _Tally([0] * len(goals), [], {}, [[], []], [])
    sums = [[0.0, 0] for _ in range(amounts)]
    groups: list[tuple[bool, tuple[Any, ...], int]] = []  # (a custom event's, key, mask)
    for row in rows:
        name, path, flags, n = row[0], row[1], row[2 : 2 + columns], int(row[2 + columns])
        for k in range(amounts):
            sums[k][0] += float(row[3 + columns + 2 * k] or 0)
            sums[k][1] += int(row[4 + columns + 2 * k] or 0)
        # Goal i is bit i of the mask (column c holds bits 62c to 62c + 61).
        mask = sum(int(m) << (BITS * c) for c, m in enumerate(row[3 + columns + 2 * amounts : -1]))
        if not mask:  # converts on no goal: never read again
            continue
        for i in range(len(goals)):
            if mask >> i & 1:
                found.conversions[i] += n
        viewed = name == PAGEVIEW
        groups.append((not viewed, (path if viewed else name, *flags), mask))
        if row[-1] is not None:
            found.bitmaps.append((mask, int.from_bytes(row[-1], "big")))
    # The pageviews' classes first: their bitmaps come first in the reach pass's.
    for side, key, mask in sorted(groups, key=lambda g: g[0]):
        found.keys[side].append((*key, found.classes.setdefault(mask, len(found.classes))))
    earned = iter(sums)
    found.revenue = [
        None if g.revenue_prop is None else (lambda r: (r[0], int(r[1])))(next(earned)) for g in goals
    ]
    return found


def figures(
    run: Run, d: Dialect, site_id: int, span: Span, filters: Filters, goals: Sequence[Goal]
) -> Figures:
    # The period's visitors (the rate's denominator) and pageviews: the summary's own figures.
    summary = queries.totals(run, d, site_id, span, filters)
    people = summary["visitors"]
    own = _bits(people)  # each custom event group's bitmap: no goal has more visitors than the period
    if summary["pageviews"] < counting.EXACT_BELOW or _groups(goals) * own > MAX_TOTAL // 2:
        own = 0  # exact: a small span (its events are no fewer than its pageviews), or too many groups
    q = Query(d, site_id, span, filters)
    branches, masks = _branches(q, goals, amounts=True), _masks(q, goals)
    found = _read(
        run(_tally(q, branches, masks, own), q.p.values), goals, len(masks), len(branches[0].amounts)
    )
    of_goal = [[s for mask, s in found.classes.items() if mask >> i & 1] for i in range(len(goals))]
    reach = Query(d, site_id, span, filters)  # its own parameters: the tally's rules are not bound
    branches = _branches(reach, goals, amounts=False)
    # No goal has more visitors than conversions, nor than the period: that sizes the bitmaps.
    viewed = [c for c, g in zip(found.conversions, goals, strict=True) if _viewed(g)]
    size = _bits(min(max(viewed, default=0), people))
    page_classes = {s for *_, s in found.keys[0]}
    if not own or len(page_classes) * size + len(found.bitmaps) * own > MAX_TOTAL:
        visitors = _exact(run, reach, branches, found.keys, of_goal)
    else:  # page goals from the reach pass's classes, the others from the tally's groups
        paged = [slots if _viewed(g) else [] for slots, g in zip(of_goal, goals, strict=True)]
        visitors = _estimated(run, reach, branches, [found.keys[0], []], paged, size)
        for i, g in enumerate(goals):
            if not _viewed(g):
                ors = [bits for mask, bits in found.bitmaps if mask >> i & 1]
                visitors[i] = _counted(functools.reduce(operator.or_, ors, 0), own)
    return Figures(visitors, found.conversions, found.revenue, people)


def _exact(
    run: Run, q: Query, branches: list[_Branch], keys: list[list[tuple[Any, ...]]], of_goal: list[list[int]]
) -> list[int]:
    """Each goal's distinct visitors, counted exactly over the events of its classes."""
    if not any(of_goal):  # no event converts on any goal
        return [0] * len(of_goal)
    exact = [f"count(DISTINCT visitor) FILTER (WHERE s IN ({', '.join(map(str, s))}))" for s in of_goal if s]
    sql = _reach(q, branches, keys, ", ".join(exact))
    found = iter(run(sql, _used(sql, q.p.values))[0])
    return [int(next(found) or 0) if s else 0 for s in of_goal]


def _estimated(
    run: Run,
    q: Query,
    branches: list[_Branch],
    keys: list[list[tuple[Any, ...]]],
    of_goal: list[list[int]],
    size: int,
) -> list[int]:
    """Each page goal's visitors, from the reach pass's bitmap of ``size`` bits per class."""
    count = 1 + max((s for rows in keys for *_, s in rows), default=-1)
    if not count:  # no pageview converts on any goal
        return [0] * len(of_goal)
    # Each class's bitmap starts at its offset, which the join brings.
    offsets = [[(*key, s * size) for *key, s in rows] for rows in keys]
    bitmap = f"bitstring_agg(s | (visitor & {size - 1}), 0, {count * size - 1})::BLOB"
    sql = _reach(q, branches, offsets, bitmap)
    data = bytes(run(sql, _used(sql, q.p.values))[0][0])
    width = size // 8
    visitors = []
    for slots in of_goal:
        union = 0
        for s in slots:
            union |= int.from_bytes(data[s * width : (s + 1) * width], "big")
        visitors.append(_counted(union, size))
    return visitors


def _counted(bits: int, size: int) -> int:
    """Linear counting: the visitors of a bitmap of ``size`` bits with ``bits`` set."""
    ones = bits.bit_count()
    return ones if ones >= size else round(-size * math.log1p(-ones / size))
