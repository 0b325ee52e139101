"""The one registry of the reports' dimensions: what a visit or an event is counted by.

Each dimension is written here once: its one name in the API (the filter parameter and the
breakdown's ``dimension``), the old spellings still accepted for it (``aliases``: the plural
breakdown names), the key the reports' queries and imported figures use for it, the store's
table and column (or SQL expression), the console's label and panel, its breakdown's ranking
and figures, the durable log's column and the raw events export's header, and what it supports.
The reports' parameters, filters and queries, the funnels' split, imported figures, the raw events
export's columns, the stats API's documentation, the assistants' tools and the console's lists
(``ui/src/reports/dimensions.gen.ts``, written by ``scripts/docs_tables.py``) all derive from it;
the store's visit attributes are its ``visits`` entries with a stored column.

Adding a visit attribute: one ``Dimension`` below, the store's feed filling its column, and tests;
when the durable log keeps it too (``log_column``), the raw events export has its column.
Imports nothing of Sightline's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What a dimension supports.
FILTER = "filter"  # a report filter (``name=value``, ``!value``, ``~value``)
BREAKDOWN = "breakdown"  # a breakdown table (``dimension=name``)
FUNNEL = "funnel"  # a funnel can be split by it (a column every event's row carries)
IMPORT = "import"  # imported history holds it
EXPORT = "export"  # the raw events export has its column

# The values a filter takes: its checks in ``reports.params``.
TEXT, PATH, CHANNEL, COUNTRY = "text", "path", "channel", "country"
GOAL, PROP, EVENT = "goal", "prop", "event"

VISIT_FIGURES = ("visitors", "visits", "pageviews", "bounce_rate", "visit_duration")
_ATTRIBUTE = frozenset({FILTER, BREAKDOWN, FUNNEL, IMPORT, EXPORT})
_IN_LOG = frozenset({FILTER, BREAKDOWN, IMPORT, EXPORT})
_OWN = frozenset({FILTER, BREAKDOWN})
_LOCAL = frozenset({FILTER, BREAKDOWN, FUNNEL, EXPORT})  # not in imported history


@dataclass(frozen=True)
class Dimension:
    name: str  # the API's one name: filter parameter and breakdown dimension
    label: str  # as the console names it
    table: str  # "visits": an attribute of the visit (every event's row carries it too); "events"
    column: str | None  # the store table's column or SQL expression (None: a rule of its own)
    key: str  # the reports' queries' and imported figures' name for it
    aliases: tuple[str, ...] = ()  # older spellings the API still accepts
    supports: frozenset[str] = _ATTRIBUTE
    values: str = TEXT  # what a filter's value is (``reports.params``)
    order: str = "visits"  # the figure a breakdown is ranked by
    fields: tuple[str, ...] = VISIT_FIGURES  # the figures each breakdown row shows
    panel: str = ""  # the console's panel of breakdowns it is a tab of ("": none)
    tab: str = ""  # the tab's title (default: ``label``)
    optional: bool = False  # breakdown rows only for visits where it is known (not '')
    stored: bool = True  # a column of its own in the store (False: an expression over others)
    on_rows: bool = True  # every event's row carries it as its visit has it (filters read rows)
    hint: str = ""  # what a value is, for the API's documentation
    # The durable log's column (the SQL ``events`` table) that keeps it (None: the log does not;
    # the store works it out, or it is a rule of its own); exported dimensions have one.
    log_column: str | None = None
    export_header: str = ""  # the raw events export's header for its column (default: ``log_column``)

    def has(self, feature: str) -> bool:
        return feature in self.supports

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def header(self) -> str:
        """Its column's header in the raw events export."""
        return self.export_header or self.log_column or self.name


def _visit(name: str, label: str, plural: str, panel: str = "", tab: str = "", **more: Any) -> Dimension:
    """A visit attribute: a column of its own on ``visits`` and on every event's row, or (``column``)
    an expression over those, worked out when a report asks (no funnel split, not exported)."""
    column = more.pop("column", name)
    if column != name:
        more.update(stored=False, supports=more.get("supports", _ATTRIBUTE) - {FUNNEL, EXPORT})
    more.setdefault("log_column", name if EXPORT in more.get("supports", _ATTRIBUTE) else None)
    return Dimension(name, label, "visits", column, name, (plural,), panel=panel, tab=tab, **more)


def _page(name: str, label: str, key: str, fields: tuple[str, ...], tab: str) -> Dimension:
    """A visit's entry or exit page: a column of ``visits`` only, NULL for a visit without pages."""
    supports = frozenset({FILTER, BREAKDOWN, IMPORT})
    more: dict[str, Any] = {"values": PATH, "fields": fields, "panel": "pages", "tab": tab, "on_rows": False}
    return Dimension(name, label, "visits", key, key, (f"{name}s",), supports, **more)


def _event(name: str, label: str, column: str | None, supports: frozenset[str], **more: Any) -> Dimension:
    """A dimension of the visit's events: a filter asks whether one of them matches."""
    return Dimension(name, label, "events", column, name, (f"{name}s",), supports, on_rows=False, **more)


_EVENTS: dict[str, Any] = {"order": "events", "fields": ("visitors", "events")}
_GOALS: dict[str, Any] = {"order": "visitors", "fields": ("visitors", "conversions", "conversion_rate")}
_PAGES: dict[str, Any] = {"order": "pageviews", "fields": ("visitors", "pageviews"), "panel": "pages"}
DIMENSIONS: tuple[Dimension, ...] = (
    _event("page", "Page", "path", _IN_LOG, values=PATH, tab="Top pages", log_column="path", **_PAGES),
    _page("entry_page", "Entry page", "entry", ("visits", "bounce_rate", "visit_duration"), "Entry pages"),
    _page("exit_page", "Exit page", "exit", ("visits",), "Exit pages"),
    _visit("source", "Source", "sources", "sources", "Sources", log_column="referrer_source"),
    # Stored: the feed works it out once per visit from its source and UTM tags (``sightline.channels``).
    _visit("channel", "Channel", "channels", "sources", "Channels", values=CHANNEL, supports=_OWN | {IMPORT}),
    _visit("utm_source", "UTM source", "utm_sources", "sources", optional=True),
    _visit("utm_medium", "UTM medium", "utm_mediums", "sources", optional=True),
    _visit("utm_campaign", "UTM campaign", "utm_campaigns", "sources", optional=True),
    _visit("browser", "Browser", "browsers", "devices", "Browsers"),
    _visit("os", "Operating system", "operating_systems", "devices", "Systems"),
    _visit("device", "Device", "devices", "devices", "Devices", log_column="device_type"),
    _visit(
        "country",
        "Country",
        "countries",
        "places",
        "Countries",
        values=COUNTRY,
        hint="ISO 3166-1 alpha-2 code",
    ),
    _visit("region", "Region", "regions", "places", "Regions", optional=True),
    _visit("city", "City", "cities", "places", "Cities", supports=_ATTRIBUTE - {IMPORT}, optional=True),
    _visit("language", "Language", "languages", "devices", "Languages", supports=_LOCAL, optional=True),
    _event(
        "event",
        "Event",
        "name",
        _IN_LOG,
        values=EVENT,
        panel="events",
        log_column="name",
        export_header="event",
        **_EVENTS,
    ),
    _event("goal", "Goal", None, _OWN, values=GOAL, hint="a goal's id", **_GOALS),
    _event(
        "prop", "Prop", "props", _OWN | {EXPORT}, values=PROP, hint="key:value", log_column="props", **_EVENTS
    ),
)

BY_NAME: dict[str, Dimension] = {d.name: d for d in DIMENSIONS}
BY_KEY: dict[str, Dimension] = {d.key: d for d in DIMENSIONS}
# Every spelling the API accepts (names and aliases) -> its dimension.
SPELLINGS: dict[str, Dimension] = {spelling: d for d in DIMENSIONS for spelling in d.spellings}


def supporting(feature: str) -> tuple[Dimension, ...]:
    """The dimensions that support ``feature``, in the registry's order."""
    return tuple(d for d in DIMENSIONS if d.has(feature))


# The raw events export (``exports.events``), its columns in order: a dimension's column by the
# dimension's name (its header and the log's column are the registry's), the log's columns that no
# dimension reads by their own name. An exported dimension not placed here comes after these, in
# the registry's order: a new dimension adds its column at the end, where no column a download
# reads by position moves.
_EXPORT_ORDER = (
    "time",
    "event",
    "page",
    "visitor_id",
    "session_id",
    "source",
    "referrer",
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "browser",
    "os",
    "device",
    "screen_class",
    "country",
    "region",
    "city",
    "prop",
)


def export_columns() -> tuple[tuple[str, str], ...]:
    """The raw events export's columns in order: (header, the log's column) each."""
    exported = {d.name: d for d in supporting(EXPORT)}
    placed = [
        (name, name) if name not in exported else _exported(exported.pop(name)) for name in _EXPORT_ORDER
    ]
    return (*placed, *(_exported(d) for d in exported.values()))


def _exported(dimension: Dimension) -> tuple[str, str]:
    return dimension.header, str(dimension.log_column)


# The store's columns of visit attributes, on the ``visits`` table and every event's row.
STORED_ATTRIBUTES: tuple[str, ...] = tuple(
    d.key for d in DIMENSIONS if d.table == "visits" and d.on_rows and d.stored
)

_SUPPORTS = (FILTER, BREAKDOWN, FUNNEL, IMPORT, EXPORT)


def markdown_table() -> str:
    """The registry as ``docs/reports.md`` lists it (``scripts/docs_tables.py`` writes it)."""
    lines = [
        "| name | old spellings (aliases) | what it is | read from | " + " | ".join(_SUPPORTS) + " |",
        "|---|---|---|---|" + "---|" * len(_SUPPORTS),
    ]
    for dimension in DIMENSIONS:
        source = f"the visit's `{dimension.key}`" if dimension.table == "visits" else "the visit's events"
        if not dimension.stored:
            source = "worked out from the visit's source and UTM tags"
        marks = " | ".join("yes" if dimension.has(feature) else "" for feature in _SUPPORTS)
        aliases = ", ".join(f"`{alias}`" for alias in dimension.aliases)
        what = dimension.label + (f" ({dimension.hint})" if dimension.hint else "")
        lines.append(f"| `{dimension.name}` | {aliases} | {what} | {source} | {marks} |")
    return "\n".join(lines)


_SUGGESTED = (TEXT, PATH, COUNTRY, EVENT)  # filters whose values the console suggests from their table


def typescript() -> str:
    """The console's lists, ``ui/src/reports/dimensions.gen.ts`` (``scripts/docs_tables.py``
    writes it; the UI's build reads it; a test fails when it drifts from the registry)."""
    filters = supporting(FILTER)
    breakdowns = supporting(BREAKDOWN)
    panels: dict[str, list[str]] = {}
    for dimension in breakdowns:
        if dimension.panel:
            # A row of a pages table filters the visits that viewed that page.
            target = "page" if dimension.values == PATH else dimension.name
            title = dimension.tab or dimension.label
            tab = f'{{ dimension: "{dimension.name}", label: "{title}", filter: "{target}" }}'
            panels.setdefault(dimension.panel, []).append(tab)
    label = {d.name: d.label + (f" ({d.hint})" if d.values == PROP else "") for d in filters}
    lines = [
        "// Generated from the registry of dimensions (src/sightline/dimensions.py) by",
        "// scripts/docs_tables.py: change the registry and run it; a test fails when this file drifts.",
        "",
        "/** Every filter, by its one name. */",
        "export const FILTER_NAMES = [" + ", ".join(f'"{d.name}"' for d in filters) + "] as const;",
        "export type FilterName = (typeof FILTER_NAMES)[number];",
        "",
        "/** Each filter's name as the console shows it. */",
        "export const FILTER_LABELS: Record<FilterName, string> = {",
        *(f'  {d.name}: "{label[d.name]}",' for d in filters),
        "};",
        "",
        "/** The breakdown table holding each filter's values, suggested as the owner types. */",
        "export const FILTER_TABLES: Partial<Record<FilterName, string>> = {",
        *(f'  {d.name}: "{d.name}",' for d in filters if d.has(BREAKDOWN) and d.values in _SUGGESTED),
        "};",
        "",
        "/** A tab of a panel of breakdowns: its dimension, title and the filter a row sets. */",
        "export interface DimensionTab {",
        "  dimension: string;",
        "  label: string;",
        "  filter: FilterName;",
        "}",
        "",
        "/** The dashboard's panels of breakdowns, each with its tabs in order. */",
        "export const PANELS: Record<string, DimensionTab[]> = {",
        *(f"  {panel}: [{', '.join(tabs)}]," for panel, tabs in panels.items()),
        "};",
        "",
        "/** The dimensions a funnel can be split by. */",
        "export const FUNNEL_SPLITS: { value: string; label: string }[] = [",
        *(f'  {{ value: "{d.name}", label: "{d.label}" }},' for d in supporting(FUNNEL)),
        "];",
        "",
    ]
    return "\n".join(lines)
