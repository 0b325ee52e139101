"""The Goals panel's figures where the store has a bitmap aggregate (DuckDB): two passes over the
span's events, neither grouped by visitor.

1. Tally: pageviews grouped by path, other events by name (and, when a goal is narrowed by a prop,
   by which of those props they carry): per group its events and revenue amounts, and its goals
   (every goal's rule evaluated once per group, a few hundred rows, never per event). Conversions
   and revenue are sums over the groups; groups converting on the same goals form one class.
2. Reach: the same events again, each given its class by a join with the tally's groups, into one
   bitmap aggregate over ``class * size + (visitor & (size - 1))``: ``size`` bits per class, set
   by its visitors' keyed hashes. A goal's visitors are the union (OR) of its classes' bitmaps,
   read by linear counting (``counting``).
Below ``counting.EXACT_BELOW`` events the reach pass counts each goal's distinct visitors exactly.
The period's visitors (the rate's denominator) are the dashboard summary's figure, from its own
query (``queries.totals``).
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter)
from __future__ import annotations

import math
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
        viewed = goal.kind == "page" or goal.event == PAGEVIEW
        if goal.prop_key is not None:  # depends on the event's props: a flag bit of its branch
            column, bit = divmod(i, BITS)
            flags[viewed][column].append((1 << bit, rules.goal_condition(d, q.bind, goal)))
        if amounts and goal.revenue_prop is not None:
            condition = rules.goal_condition(d, q.bind, goal)
            amount = f"CASE WHEN {condition} THEN {rules.prop_number(d, q.bind, goal.revenue_prop)} END"
            values[viewed].append(amount)
            values[not viewed].append("NULL")
    return [
        _Branch("path", VIEWED, [_sum(f) for f in flags[True]], values[True]),
        _Branch("name", f"name != '{PAGEVIEW}'", [_sum(f) for f in flags[False]], values[False]),
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


def _tally(q: Query, branches: list[_Branch], masks: list[str]) -> str:
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
        parts.append(
            f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM events "
            f"WHERE {q.events(b.where)}) AS x GROUP BY {', '.join([b.key, *_grouped(b)])}"
        )
    revenue = "".join(f", r{k}, k{k}" for k in range(len(branches[0].amounts)))
    ms = ", ".join(f"{m} AS m{c}" for c, m in enumerate(masks))
    return f"SELECT name, path, {', '.join(fs)}, n{revenue}, {ms} FROM ({' UNION ALL '.join(parts)}) AS t"


def _reach(q: Query, branches: list[_Branch], keys: list[list[tuple[Any, ...]]], aggregates: str) -> str:
    """``aggregates`` over every event with its value ``s`` from a join on the branch's key and
    flags with the tally's groups (``keys``: per branch, rows ``(key, *flags, s)``)."""
    parts = []
    for b, rows in zip(branches, keys, strict=True):
        if not rows:  # no such events
            continue
        fs = _grouped(b)
        columns = list(zip(*rows, strict=True))
        chosen = [0, *(1 + int(f[1:]) for f in fs), len(columns) - 1]
        names = [f"k_{b.key}", *(f"k_{f}" for f in fs), "s"]
        table = ", ".join(
            f"unnest({q.bind(list(columns[i]))}) AS {n}" for i, n in zip(chosen, names, strict=True)
        )
        on = " AND ".join(f"{x} = k_{x}" for x in [b.key, *fs])
        inner = ", ".join(["visitor", b.key, *(f"{f} AS f{c}" for c, f in enumerate(b.flags) if f != "0")])
        parts.append(
            f"SELECT visitor, s FROM (SELECT {inner} FROM events WHERE {q.events(b.where)}) AS e "
            f"JOIN (SELECT {table}) AS k ON {on}"
        )
    return f"SELECT {aggregates} FROM ({' UNION ALL '.join(parts)}) AS x"


def everyone(run: Run, d: Dialect, site_id: int, span: Span, filters: Filters) -> int:
    """The period's unique visitors, the conversion rate's denominator: the dashboard summary's
    figure, from the summary's own query (one count, one way)."""
    return queries.totals(run, d, site_id, span, filters)["visitors"]


def figures(
    run: Run, d: Dialect, site_id: int, span: Span, filters: Filters, goals: Sequence[Goal]
) -> Figures:
    q = Query(d, site_id, span, filters)
    branches, masks = _branches(q, goals, amounts=True), _masks(q, goals)
    rows = run(_tally(q, branches, masks), q.p.values)
    columns, amounts = len(masks), len(branches[0].amounts)
    conversions = [0] * len(goals)
    sums = [[0.0, 0] for _ in range(amounts)]
    classes: dict[int, int] = {}  # a goal mask -> its class
    keys: list[list[tuple[Any, ...]]] = [[], []]
    total = 0
    for row in rows:
        name, path, flags, n = row[0], row[1], row[2 : 2 + columns], int(row[2 + columns])
        total += n
        for k in range(amounts):
            sums[k][0] += float(row[3 + columns + 2 * k] or 0)
            sums[k][1] += int(row[4 + columns + 2 * k] or 0)
        # Goal i is bit i of the mask (column c holds bits 62c to 62c + 61).
        mask = sum(int(m) << (BITS * c) for c, m in enumerate(row[3 + columns + 2 * amounts :]))
        for i in range(len(goals)):
            if mask >> i & 1:
                conversions[i] += n
        if mask:  # only events that convert on some goal are read again
            s = classes.setdefault(mask, len(classes))
            keys[0 if name == PAGEVIEW else 1].append((path if name == PAGEVIEW else name, *flags, s))
    earned = iter(sums)
    revenue = [None if g.revenue_prop is None else (lambda r: (r[0], int(r[1])))(next(earned)) for g in goals]
    if not total:
        return Figures([0] * len(goals), conversions, revenue, 0)
    of_goal = [[s for mask, s in classes.items() if mask >> i & 1] for i in range(len(goals))]
    people = everyone(run, d, site_id, span, filters)
    # No goal has more visitors than conversions, nor than the period: that sizes the bitmaps.
    most = min(max(conversions), people)
    reach = Query(d, site_id, span, filters)  # its own parameters: the tally's rules are not bound
    visitors = _visitors(run, reach, _branches(reach, goals, amounts=False), keys, of_goal, total, most)
    return Figures(visitors, conversions, revenue, people)


def _visitors(
    run: Run,
    q: Query,
    branches: list[_Branch],
    keys: list[list[tuple[Any, ...]]],
    of_goal: list[list[int]],
    total: int,
    most: int,
) -> list[int]:
    """Each goal's unique visitors, from the reach pass over the events of ``keys``' classes."""
    count = 1 + max((s for rows in keys for *_, s in rows), default=-1)
    if not count:  # no event converts on any goal
        return [0] * len(of_goal)
    size = 1 << min(MAX_BITS, max(MIN_BITS, (max(1, most // 2) - 1).bit_length()))
    if total < counting.EXACT_BELOW or count * size > MAX_TOTAL:
        exact = [
            f"count(DISTINCT visitor) FILTER (WHERE s IN ({', '.join(map(str, s))}))" for s in of_goal if s
        ]
        found = iter(run(_reach(q, branches, keys, ", ".join(exact)), q.p.values)[0])
        return [int(next(found) or 0) if s else 0 for s in of_goal]
    # Each class's bitmap starts at its offset, which the join brings.
    offsets = [[(*key, s * size) for *key, s in rows] for rows in keys]
    bitmap = f"bitstring_agg(s + (visitor & {size - 1})::INTEGER, 0, {count * size - 1})::BLOB"
    data = bytes(run(_reach(q, branches, offsets, bitmap), q.p.values)[0][0])
    width = size // 8
    visitors = []
    for slots in of_goal:
        union = 0
        for s in slots:
            union |= int.from_bytes(data[s * width : (s + 1) * width], "big")
        ones = union.bit_count()
        visitors.append(ones if ones >= size else round(-size * math.log1p(-ones / size)))
    return visitors
