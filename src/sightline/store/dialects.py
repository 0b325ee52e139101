"""The two SQL dialects of the store: what differs between DuckDB and ClickHouse, in one place.

Reports are written once with these fragments; every value reaches the engine as a bound
parameter (``Params.bind``), never as text pasted into the SQL. Times are Int64 microseconds since
the Unix epoch (UTC) in both engines, so bucketing and spans are plain integer arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Dialect:
    name: str
    visits: str  # how a query names the visits table (ClickHouse reads its latest rows: FINAL)
    element: str  # array element, 1-based: "{array}[{index}]"-like template
    has: str  # array contains value
    position: str  # the 1-based position of "{value}" in "{array}", 0 or NULL when absent
    idiv: str  # integer division
    unnest: str  # one row per array element, in the SELECT list
    uint64: str  # the type of visitor keys
    uint32: str  # the type of visit numbers
    array: str  # the type of an array of "{type}"
    search: str  # case-insensitive "contains": "{column}", "{value}"
    starts: str  # "{column}" starts with "{value}"
    regex: str  # "{column}" matches the RE2 pattern "{value}" somewhere (anchor it for a whole match)
    number: str  # the text "{value}" as a Float64, NULL when it is not a number
    amount: str  # the text "{value}" as a decimal to the millionth (exact sums), NULL when not a number
    median: str  # the interpolated median of "{value}" (the mean of the two middle values when even)
    quantile: str  # the interpolated quantile "{level}" (0..1, a literal) of "{value}", as ``median``
    prop: str  # the text after "{prefix}" ("key\x1f") of the first element of "{props}" starting with it
    # The "{value}"s of a group's "{n}" rows of least (``first``) or greatest (``last``) "{key}", as
    # an array in that order (a top-n aggregate: no sort of the whole group, no window).
    first: str
    last: str
    # One comparable value ordering a visit's events by (time, id): DuckDB compares and aggregates a
    # 128-bit integer several times faster than a struct; ClickHouse's tuples are fast as they are.
    sequence: str
    # The time and the id of a ``sequence`` value "{k}".
    sequence_time: str
    sequence_id: str
    bit_or: str  # the bitwise OR of a group's "{value}"s (non-negative integers)
    group_list: str  # a group's "{value}"s as one array
    # How many of the bits "{column} & {mask}" (mask = 2^k - 1) a group sets: linear counting's
    # input for unique visitors of big spans (``reports.counting``); None: count exactly.
    bitmap: str | None = None
    # Near an event whose ``sequence`` value is ("t0", "i0"): a cheaper key ordering the events of
    # its visit as ``sequence`` does (``near``), exact unless ``loose`` holds for one of them.
    # DuckDB's top-n aggregates compare a 64-bit integer several times faster than a 128-bit one
    # (a string value's copies aside, the 128-bit key was half of a journey's top-n cost). None:
    # ``sequence`` is cheap enough.
    near: str | None = None
    loose: str | None = None
    # Spans of at least this many events (or visits) count unique visitors on a bitmap, and the
    # reports keep their figures between requests (``reports.counting``); None: counting's default.
    # Tests set it low so that a small store takes the paths a big one takes.
    exact_below: int | None = None

    def param(self, name: str, kind: str) -> str:
        """The placeholder of parameter ``name`` whose ClickHouse type is ``kind``."""
        if self.name == "duckdb":
            return f"${name}"
        return "{" + f"{name}:{kind}" + "}"

    def at(self, array: str, index: str) -> str:
        return self.element.format(array=array, index=index)

    def contains(self, array: str, value: str) -> str:
        return self.has.format(array=array, value=value)

    def div(self, dividend: str, divisor: str) -> str:
        return self.idiv.format(dividend=dividend, divisor=divisor)

    def explode(self, array: str) -> str:
        return self.unnest.format(array=array)

    def visit_numbers(self, bound: str) -> str:
        """One row per visit number of the bound array ``bound``."""
        return self.explode(f"CAST({bound} AS {self.array.format(type=self.uint32)})")


DUCKDB = Dialect(
    name="duckdb",
    visits="visits",
    element="list_extract({array}, {index})",
    has="list_contains({array}, {value})",
    position="list_position({array}, {value})",
    idiv="({dividend}) // ({divisor})",
    unnest="unnest({array})",
    uint64="UBIGINT",
    uint32="UINTEGER",
    array="{type}[]",
    search="contains(lower({column}), lower({value}))",
    starts="starts_with({column}, {value})",
    regex="regexp_matches({column}, {value})",
    number="TRY_CAST({value} AS DOUBLE)",
    amount="TRY_CAST({value} AS DECIMAL(38, 6))",
    median="quantile_cont({value}, 0.5)",
    quantile="quantile_cont({value}, {level})",
    prop="substr(list_extract(list_filter({props}, lambda x: starts_with(x, {prefix})), 1), "
    "length({prefix}) + 1)",
    first="arg_min({value}, {key}, {n})",
    last="arg_max({value}, {key}, {n})",
    sequence="(CAST(time AS HUGEINT) * 18446744073709551616 + id)",
    sequence_time="CAST({k} >> 64 AS BIGINT)",
    sequence_id="CAST({k} & 18446744073709551615 AS BIGINT)",
    # 2^25 ids either side of i0 and 2^37 microseconds (38 hours) either side of t0: beyond those
    # the key is clamped, still ordered by time but no longer by id among equal times (``loose``).
    near="(least(greatest(time - t0, -137438953471), 137438953471) * 67108864 "
    "+ least(greatest(id - i0, -33554432), 33554431))",
    loose="(time - t0 NOT BETWEEN -137438953471 AND 137438953471 "
    "OR id - i0 NOT BETWEEN -33554432 AND 33554431)",
    bit_or="bit_or({value})",
    group_list="list({value})",
    bitmap="bit_count(bitstring_agg(({column} & {mask})::INTEGER, 0, {mask}))",
)
CLICKHOUSE = Dialect(
    name="clickhouse",
    visits="visits FINAL",
    element="arrayElement({array}, {index})",
    has="has({array}, {value})",
    position="indexOf({array}, {value})",
    idiv="intDiv({dividend}, {divisor})",
    unnest="arrayJoin({array})",
    uint64="UInt64",
    uint32="UInt32",
    array="Array({type})",
    search="positionCaseInsensitiveUTF8({column}, {value}) > 0",
    starts="startsWith({column}, {value})",
    regex="match({column}, {value})",
    number="toFloat64OrNull({value})",
    amount="round(toDecimal128OrNull({value}, 12), 6)",
    median="quantileExactInclusive(0.5)({value})",
    quantile="quantileExactInclusive({level})({value})",
    prop="substring(arrayElement(arrayFilter(x -> startsWith(x, {prefix}), {props}), 1), "
    "length({prefix}) + 1)",
    first="arrayMap(x -> x.2, arraySlice(arraySort(groupArray(({key}, {value}))), 1, {n}))",
    last="arrayMap(x -> x.2, arraySlice(arrayReverseSort(groupArray(({key}, {value}))), 1, {n}))",
    sequence="(time, id)",
    sequence_time="tupleElement({k}, 1)",
    sequence_id="tupleElement({k}, 2)",
    bit_or="groupBitOr({value})",
    group_list="groupArray({value})",
)


def _kind(value: Any) -> str:
    """The ClickHouse type of a bound value (DuckDB infers it)."""
    if isinstance(value, bool):
        return "Bool"
    if isinstance(value, int):
        return "UInt64" if value > 2**63 - 1 else "Int64"
    if isinstance(value, float):
        return "Float64"
    if isinstance(value, str):
        return "String"
    if isinstance(value, (list, tuple)):
        inner = (
            _kind(max(value))
            if value and all(isinstance(v, int) for v in value)
            else (_kind(value[0]) if value else "Int64")
        )
        return f"Array({inner})"
    raise TypeError(f"cannot bind {type(value).__name__}")


@dataclass
class Params:
    """The bound values of one query, named ``p0``, ``p1``, ... in the order they are bound."""

    dialect: Dialect
    values: dict[str, Any] = field(default_factory=dict)

    def bind(self, value: Any) -> str:
        name = f"p{len(self.values)}"
        self.values[name] = list(value) if isinstance(value, tuple) else value
        return self.dialect.param(name, _kind(value))
