"""The Goals panel's figures where the store has a bitmap aggregate (DuckDB): two passes over the
events of the pieces of the span it needs (days, ``goal_days``), neither grouped by visitor.

1. Tally: pageviews grouped by piece and path, the goals' custom events by piece and name (and,
   when a goal is narrowed by a prop, by which of those props they carry): per group its events
   and revenue amounts, and its goals (every goal's rule evaluated once per group, never per
   event). Conversions and revenue are sums over the groups; paths converting on the same goals
   form one class. Above the size threshold each custom event group also sets one bit per
   visitor in a bitmap of its own (a handful of groups per piece): custom events are read once.
2. Reach: the converting pageviews again, each given its class by a join with the tally's paths,
   into one bitmap aggregate over ``(piece * classes + class) * size | (visitor & (size - 1))``:
   ``size`` bits per piece and class, set by its visitors' keyed hashes.
A goal's visitors in a piece are the union (OR) of its classes' (or groups') bitmaps there; over
the span, the union of its pieces', read by linear counting (``counting``). Bitmaps of one size are
merged by OR, and one of ``2 size`` bits folds into one of ``size`` (its halves ORed): the very
bitmap a single pass over the whole span would set, so a piece kept from an earlier request
(``goal_days``) counts exactly as if read again. The period's visitors (the rate's denominator) and
pageviews are the dashboard summary's figures, from its own query (``queries.totals``), run first:
below ``counting.threshold`` pageviews (a span's events are never fewer) one tally and an exact
reach pass count each goal's distinct visitors over the whole span, pageviews and custom events.
"""

# ruff: noqa: S608  (SQL made of fixed fragments; every value is a bound parameter or an integer)
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sightline.reports import counting, queries, rules
from sightline.reports.filters import Filters, Goal
from sightline.reports.queries import Query, Run, Span
from sightline.store.dialects import Dialect
from sightline.store.epoch import EPOCH, MICROSECOND, micros
from sightline.store.schema import PAGEVIEW

if TYPE_CHECKING:
    from sightline.reports.goal_days import Days

BITS = 62  # goals per mask column (a signed 64-bit integer)
MIN_BITS, MAX_BITS = 18, 23  # a bitmap: 32 KiB to 1 MiB
MAX_TOTAL = 1 << 27  # bits of one query's bitmaps (16 MiB): more pieces, more queries; a piece's more: exact
VIEWED = f"name = '{PAGEVIEW}'"
DAY = 86_400_000_000  # microseconds


@dataclass(frozen=True)
class Figures:
    """Per goal (in the order given): unique visitors, conversions, and revenue ``(total, counted)``
    (None for a goal without revenue); and the period's unique visitors."""

    visitors: list[int]
    conversions: list[int]
    revenue: list[tuple[Decimal, int] | None]
    everyone: int


@dataclass
class Piece:
    """What one piece of a span (a day, or the part of one a span holds) gives each goal: its
    conversions, revenue ``(total, counted)`` (None for a goal without revenue), and its visitors
    as a bitmap of ``size`` bits (bit ``i`` of the bitmap is the integer's bit ``size - 1 - i``)."""

    conversions: list[int]
    revenue: list[tuple[Decimal, int] | None]
    bits: list[int]
    size: int


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


def _branches(query: Query, goals: Sequence[Goal], amounts: bool) -> list[_Branch]:
    """Pageviews and the other events, with the flags of the prop goals each can meet and (when
    ``amounts``) each revenue goal's amount."""
    dialect = query.dialect
    columns = (len(goals) + BITS - 1) // BITS
    flags: dict[bool, list[list[tuple[int, str]]]] = {
        side: [[] for _ in range(columns)] for side in (True, False)
    }
    values: dict[bool, list[str]] = {True: [], False: []}
    for index, goal in enumerate(goals):
        viewed = _viewed(goal)
        if goal.prop_key is not None:  # depends on the event's props: a flag bit of its branch
            column, bit = divmod(index, BITS)
            flags[viewed][column].append((1 << bit, rules.goal_condition(dialect, query.bind, goal)))
        if amounts and goal.revenue_prop is not None:
            condition = rules.goal_condition(dialect, query.bind, goal)
            amount = (
                f"CASE WHEN {condition} THEN {rules.prop_amount(dialect, query.bind, goal.revenue_prop)} END"
            )
            values[viewed].append(amount)
            values[not viewed].append("NULL")
    sent = f"name IN ({', '.join(query.bind(n) for n in _sent(goals))})" if _sent(goals) else "FALSE"
    return [
        _Branch("path", VIEWED, [_sum(f) for f in flags[True]], values[True]),
        _Branch("name", sent, [_sum(f) for f in flags[False]], values[False]),
    ]


def _masks(query: Query, goals: Sequence[Goal]) -> list[str]:
    """Per mask column, the goal bits of a group (``name``, ``path``, its flags ``f{c}``)."""
    static: list[list[tuple[int, str]]] = [[] for _ in range((len(goals) + BITS - 1) // BITS)]
    for index, goal in enumerate(goals):
        if goal.prop_key is None:
            column, bit = divmod(index, BITS)
            static[column].append((1 << bit, rules.goal_condition(query.dialect, query.bind, goal)))
    return [f"{_sum(parts)} + f{c}" for c, parts in enumerate(static)]


def _grouped(branch: _Branch) -> list[str]:
    """The flag columns a branch's events differ by (none without a prop goal on them)."""
    return [f"f{c}" for c, f in enumerate(branch.flags) if f != "0"]


def index_of(bounds: Sequence[int]) -> str:
    """The SQL of an event's piece: ``i`` for ``bounds[i] <= time < bounds[i + 1]`` (microseconds).
    Runs of whole days of 24 hours are one division; a day of 23 or 25 hours (a clock change) and
    a partial last piece are a branch of their own."""
    count = len(bounds) - 1
    branches: list[tuple[int, str]] = []  # (the branch's end, its SQL)
    piece = 0
    while piece < count:
        run_end = piece
        while run_end < count and bounds[run_end + 1] - bounds[run_end] == DAY:
            run_end += 1
        if run_end == piece:  # not 24 hours long
            branches.append((bounds[piece + 1], str(piece)))
            piece += 1
        else:
            branches.append((bounds[run_end], f"(time - {bounds[piece]}) // {DAY} + {piece}"))
            piece = run_end
    if len(branches) == 1:
        return branches[0][1]
    cases = " ".join(f"WHEN time < {end} THEN {sql}" for end, sql in branches[:-1])
    return f"(CASE {cases} ELSE {branches[-1][1]} END)"


def _tally(query: Query, branches: list[_Branch], masks: list[str], own: int, index: str) -> str:
    """Per piece and group its events, revenue and goal masks; with ``own`` bits, also each custom
    event group's bitmap of visitors (NULL for pageviews)."""
    fs = [f"f{c}" for c in range(len(masks))]
    parts = []
    for branch in branches:
        inner = [
            f"{index} AS day",
            branch.key,
            *(f"{f} AS f{c}" for c, f in enumerate(branch.flags) if f != "0"),
        ]
        inner += [f"{a} AS a{k}" for k, a in enumerate(branch.amounts) if a != "NULL"]
        name, path = (f"'{PAGEVIEW}'", "path") if branch.key == "path" else ("name", "''")
        outer = ["day", f"{name} AS name", f"{path} AS path"]
        outer += [f"f{c}" if f != "0" else f"0 AS f{c}" for c, f in enumerate(branch.flags)]
        outer.append("count(*) AS n")
        outer += [
            f"sum(a{k}) AS r{k}, count(a{k}) AS k{k}" if a != "NULL" else f"NULL AS r{k}, 0 AS k{k}"
            for k, a in enumerate(branch.amounts)
        ]
        if own and branch.key == "name":
            inner.append("visitor")
            outer.append(f"bitstring_agg(visitor & {own - 1}, 0, {own - 1})::BLOB AS b")
        else:
            outer.append("NULL AS b")
        parts.append(
            f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM events "
            f"WHERE {query.events(branch.where)}) AS x "
            f"GROUP BY {', '.join(['day', branch.key, *_grouped(branch)])}"
        )
    revenue = "".join(f", r{k}, k{k}" for k in range(len(branches[0].amounts)))
    ms = ", ".join(f"{m} AS m{c}" for c, m in enumerate(masks))
    return (
        f"SELECT day, name, path, {', '.join(fs)}, n{revenue}, {ms}, b "
        f"FROM ({' UNION ALL '.join(parts)}) AS t"
    )


def _reach(query: Query, branches: list[_Branch], keys: list[list[tuple[Any, ...]]], aggregates: str) -> str:
    """``aggregates`` over every event with its value ``s`` from a join on the branch's key and
    flags with the tally's groups (``keys``: per branch, rows ``(key, *flags, s)``)."""
    parts = []
    for branch, rows in zip(branches, keys, strict=True):
        if not rows:  # no such events
            continue
        fs = _grouped(branch)
        columns = list(zip(*rows, strict=True))
        chosen = [0, *(1 + int(f[1:]) for f in fs)]
        names = [f"k_{branch.key}", *(f"k_{f}" for f in fs)]
        table = ", ".join(
            f"unnest({query.bind(list(columns[i]))}) AS {n}" for i, n in zip(chosen, names, strict=True)
        )
        table += (
            f", CAST(unnest({query.bind(list(columns[-1]))}) AS {query.dialect.uint64}) AS s"  # for a bit OR
        )
        on = " AND ".join(f"{x} = k_{x}" for x in [branch.key, *fs])
        inner = ", ".join(
            ["visitor", "time", branch.key, *(f"{f} AS f{c}" for c, f in enumerate(branch.flags) if f != "0")]
        )
        parts.append(
            f"SELECT visitor, time, s FROM (SELECT {inner} FROM events "
            f"WHERE {query.events(branch.where)}) AS e "
            f"JOIN (SELECT {table}) AS k ON {on}"
        )
    return f"SELECT {aggregates} FROM ({' UNION ALL '.join(parts)}) AS x"


def _used(sql: str, values: dict[str, Any]) -> dict[str, Any]:
    """The bound values ``sql`` refers to (a branch with no events to read leaves its own out)."""
    return {name: value for name, value in values.items() if re.search(rf"\${name}\b", sql)}


def bits_for(most: int) -> int:
    """A bitmap's size for at most ``most`` visitors: at most two per bit, within the bounds."""
    return 1 << min(MAX_BITS, max(MIN_BITS, (max(1, most // 2) - 1).bit_length()))


def _sent(goals: Sequence[Goal]) -> list[str]:
    """The names of the custom events goals convert on."""
    return sorted({g.event for g in goals if g.kind == "event" and g.event and g.event != PAGEVIEW})


def _groups(goals: Sequence[Goal]) -> int:
    """The most groups of goals' custom events the tally can make in a piece: per name, one per
    set of its prop goals an event can meet."""
    return sum(
        1 << min(30, sum(g.event == n and g.prop_key is not None for g in goals)) for n in _sent(goals)
    )


@dataclass
class _Tally:
    """What the tally found: per piece and goal its conversions and revenue; the paths' classes (a
    goal mask -> its class) and each converting group's key with its class, per branch; and per
    piece each custom event group's mask and bitmap (when the tally made them)."""

    conversions: dict[int, list[int]]
    revenue: dict[int, list[list[Decimal]]]  # per piece, per revenue goal: [total, counted]
    classes: dict[int, int]
    keys: list[list[tuple[Any, ...]]]
    bitmaps: dict[int, list[tuple[int, int]]]


def _read(rows: list[tuple[Any, ...]], goals: Sequence[Goal], columns: int, amounts: int) -> _Tally:
    found = _Tally({}, {}, {}, [[], []], {})
    keyed: dict[tuple[bool, tuple[Any, ...]], int] = {}  # (a custom event's, key) -> mask
    for row in rows:
        day, name, path, flags, count = (
            int(row[0]),
            row[1],
            row[2],
            row[3 : 3 + columns],
            int(row[3 + columns]),
        )
        conversions = found.conversions.setdefault(day, [0] * len(goals))
        sums = found.revenue.setdefault(day, [[Decimal(0), Decimal(0)] for _ in range(amounts)])
        for amount in range(amounts):
            sums[amount][0] += Decimal(row[4 + columns + 2 * amount] or 0)
            sums[amount][1] += int(row[5 + columns + 2 * amount] or 0)
        # Goal i is bit i of the mask (column c holds bits 62c to 62c + 61).
        mask = sum(int(m) << (BITS * c) for c, m in enumerate(row[4 + columns + 2 * amounts : -1]))
        if not mask:  # converts on no goal: never read again
            continue
        for index in range(len(goals)):
            if mask >> index & 1:
                conversions[index] += count
        viewed = name == PAGEVIEW
        keyed[(not viewed, (path if viewed else name, *flags))] = mask
        if row[-1] is not None:
            found.bitmaps.setdefault(day, []).append((mask, int.from_bytes(row[-1], "big")))
    # The pageviews' classes first: their bitmaps come first in the reach pass's.
    for (side, key), mask in sorted(keyed.items(), key=lambda item: item[0][0]):
        found.keys[side].append((*key, found.classes.setdefault(mask, len(found.classes))))
    return found


def _revenue(goals: Sequence[Goal], sums: list[list[Decimal]]) -> list[tuple[Decimal, int] | None]:
    earned = iter(sums)
    return [
        None if g.revenue_prop is None else (lambda pair: (pair[0], int(pair[1])))(next(earned))
        for g in goals
    ]


def figures(
    run: Run,
    dialect: Dialect,
    site_id: int,
    span: Span,
    filters: Filters,
    goals: Sequence[Goal],
    days: Days | None = None,
) -> Figures:
    """Every goal's figures over ``span``; with ``days``, complete past days are taken from (and
    added to) what earlier requests kept."""
    # The period's visitors (the rate's denominator) and pageviews: the summary's own figures.
    summary = queries.totals(run, dialect, site_id, span, filters)
    people = summary["visitors"]
    own = bits_for(people)  # each bitmap: no goal has more visitors than the period
    if summary["pageviews"] >= counting.threshold(dialect) and _groups(goals) * own <= MAX_TOTAL:
        bounds = days.bounds(span) if days is not None else [micros(span[0]), micros(span[1])]
        if days is not None:
            found = days.figures(run, dialect, site_id, bounds, goals, own)
        else:
            found = pieces(run, dialect, site_id, bounds, range(len(bounds) - 1), goals, own)
        if found is not None:
            return _merged(list(found.values()), goals, own, people)
    return _counted_exactly(run, dialect, site_id, span, filters, goals, people)


def _merged(found: list[Piece], goals: Sequence[Goal], size: int, people: int) -> Figures:
    """The span's figures from its pieces' (bitmaps of ``size`` bits or more, folded to it)."""
    visitors, conversions = [], []
    revenue: list[tuple[Decimal, int] | None] = []
    for index, goal in enumerate(goals):
        union = 0
        for piece in found:
            union |= fold(piece.bits[index], piece.size, size)
        visitors.append(_counted(union, size))
        conversions.append(sum(p.conversions[index] for p in found))
        if goal.revenue_prop is None:
            revenue.append(None)
        else:
            shares = [share for p in found if (share := p.revenue[index]) is not None]
            revenue.append((sum((t for t, _ in shares), Decimal(0)), sum(c for _, c in shares)))
    return Figures(visitors, conversions, revenue, people)


def fold(bits: int, size: int, to: int) -> int:
    """A bitmap of ``size`` bits as one of ``to`` bits (a power of two, at most ``size``): the
    visitor whose hash sets bit ``h & (size - 1)`` sets bit ``h & (to - 1)``."""
    while size > to:
        size //= 2
        bits = (bits >> size) | (bits & ((1 << size) - 1))
    return bits


def _span(bounds: Sequence[int], first: int, last: int) -> Span:
    return (EPOCH + bounds[first] * MICROSECOND, EPOCH + bounds[last + 1] * MICROSECOND)


def pieces(
    run: Run,
    dialect: Dialect,
    site_id: int,
    bounds: Sequence[int],
    wanted: Sequence[int],
    goals: Sequence[Goal],
    own: int,
) -> dict[int, Piece] | None:
    """The figures of the pieces ``wanted`` (indexes into ``bounds``), with bitmaps of ``own`` bits;
    None when one piece's classes would need more than ``MAX_TOTAL`` bits (count exactly then)."""
    index = index_of(bounds)
    out: dict[int, Piece] = {}
    per_query = max(1, MAX_TOTAL // max(1, _groups(goals) * own))
    for first, last in _runs(wanted, per_query):
        query = Query(dialect, site_id, _span(bounds, first, last), Filters())
        branches, masks = _branches(query, goals, amounts=True), _masks(query, goals)
        amounts = len(branches[0].amounts)
        found = _read(
            run(_tally(query, branches, masks, own, index), query.params.values), goals, len(masks), amounts
        )
        page_classes = {s for *_, s in found.keys[0]}
        if len(page_classes) * own > MAX_TOTAL:
            return None
        visited = _visited(run, dialect, site_id, bounds, (first, last), goals, found, own, index)
        for day in range(first, last + 1):
            bits = visited.get(day, [0] * len(goals))
            for mask, bitmap in found.bitmaps.get(day, []):
                for goal_index in range(len(goals)):
                    if mask >> goal_index & 1 and not _viewed(goals[goal_index]):
                        bits[goal_index] |= bitmap
            conversions = found.conversions.get(day, [0] * len(goals))
            sums = found.revenue.get(day, [[Decimal(0), Decimal(0)] for _ in range(amounts)])
            out[day] = Piece(conversions, _revenue(goals, sums), bits, own)
    return out


def _runs(wanted: Sequence[int], most: int) -> list[tuple[int, int]]:
    """The wanted pieces as runs of consecutive ones, each of at most ``most`` pieces."""
    runs: list[tuple[int, int]] = []
    for day in sorted(wanted):
        if runs and runs[-1][1] == day - 1 and day - runs[-1][0] < most:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


def _visited(
    run: Run,
    dialect: Dialect,
    site_id: int,
    bounds: Sequence[int],
    pieces: tuple[int, int],
    goals: Sequence[Goal],
    found: _Tally,
    own: int,
    index: str,
) -> dict[int, list[int]]:
    """Per piece, each page goal's bitmap of visitors (0 for the others), from the reach pass's
    bitmap of ``own`` bits per piece and class; in queries of at most ``MAX_TOTAL`` bits."""
    count = 1 + max((s for *_, s in found.keys[0]), default=-1)
    if not count:  # no pageview converts on any goal
        return {}
    of_goal = [
        [s for mask, s in found.classes.items() if mask >> i & 1] if _viewed(g) else []
        for i, g in enumerate(goals)
    ]
    width = own // 8
    out: dict[int, list[int]] = {}
    step = max(1, MAX_TOTAL // (count * own))
    for first in range(pieces[0], pieces[1] + 1, step):
        last = min(pieces[1], first + step - 1)
        query = Query(dialect, site_id, _span(bounds, first, last), Filters())
        branches = _branches(query, goals, amounts=False)
        # Each class's bitmap starts at its offset, which the join brings; each piece's after the last's.
        offsets = [[(*key, s * own) for *key, s in found.keys[0]], []]
        at = f"CAST(({index} - {first}) * {count * own} AS {dialect.uint64}) + s"
        end = (last - first + 1) * count * own - 1
        bitmap = f"bitstring_agg({at} | (visitor & {own - 1}), 0, {end})::BLOB"
        sql = _reach(query, branches, offsets, bitmap)
        data = bytes(run(sql, _used(sql, query.params.values))[0][0])
        for day in range(first, last + 1):
            base = (day - first) * count * width
            bits = []
            for slots in of_goal:
                union = 0
                for slot in slots:
                    union |= int.from_bytes(data[base + slot * width : base + (slot + 1) * width], "big")
                bits.append(union)
            out[day] = bits
    return out


def _counted_exactly(
    run: Run, dialect: Dialect, site_id: int, span: Span, filters: Filters, goals: Sequence[Goal], people: int
) -> Figures:
    """One tally over the whole span, then each goal's distinct visitors counted exactly over the
    events of its classes."""
    query = Query(dialect, site_id, span, filters)
    branches, masks = _branches(query, goals, amounts=True), _masks(query, goals)
    amounts = len(branches[0].amounts)
    found = _read(
        run(_tally(query, branches, masks, 0, "0"), query.params.values), goals, len(masks), amounts
    )
    conversions = found.conversions.get(0, [0] * len(goals))
    revenue = _revenue(goals, found.revenue.get(0, [[Decimal(0), Decimal(0)] for _ in range(amounts)]))
    of_goal = [[s for mask, s in found.classes.items() if mask >> i & 1] for i in range(len(goals))]
    if not any(of_goal):  # no event converts on any goal
        return Figures([0] * len(goals), conversions, revenue, people)
    reach = Query(dialect, site_id, span, filters)  # its own parameters: the tally's rules are not bound
    exact = [f"count(DISTINCT visitor) FILTER (WHERE s IN ({', '.join(map(str, s))}))" for s in of_goal if s]
    sql = _reach(reach, _branches(reach, goals, amounts=False), found.keys, ", ".join(exact))
    counted = iter(run(sql, _used(sql, reach.params.values))[0])
    visitors = [int(next(counted) or 0) if s else 0 for s in of_goal]
    return Figures(visitors, conversions, revenue, people)


def _counted(bits: int, size: int) -> int:
    """Linear counting: the visitors of a bitmap of ``size`` bits with ``bits`` set."""
    ones = bits.bit_count()
    return ones if ones >= size else round(-size * math.log1p(-ones / size))
