"""The tools an assistant calls: one per stats API report, taking the report's parameters.

Names follow the reports API (``docs/reports.md``) but for two: its ``from`` and ``to`` are
``from_date`` and ``to_date`` here (``from`` is a reserved word in most languages the tools are
called from), and its filter parameters travel in one ``filters`` object
(``{"page": "/pricing", "source": "!google.com"}``). Every answer is the API's JSON as it stands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from sightline import __version__, dimensions
from sightline.assistants.stats import StatsApi
from sightline.channels import CHANNELS

INSTRUCTIONS = (
    "Sightline is a privacy-first web analytics service. Start with list_sites to learn the site ids "
    "this key may read, then ask summary, timeseries, breakdown, goals, funnel or realtime for one "
    "site. Periods are in the site's time zone. Rates (bounce_rate, conversion_rate) are fractions."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

SiteId = Annotated[int, Field(ge=1, description="The site's id, as list_sites gives it.")]
Range = Annotated[
    Literal["today", "yesterday", "7d", "30d", "month", "last_month", "12mo", "all", "custom"] | None,
    Field(description="The period (default 7d); custom needs from_date and to_date."),
]
FromDate = Annotated[str | None, Field(description="First day, YYYY-MM-DD (range=custom).")]
ToDate = Annotated[str | None, Field(description="Last day, YYYY-MM-DD (range=custom).")]
Compare = Annotated[
    bool | None, Field(description="Also give the previous period's figures (the same span just before).")
]


def _described(dimension: dimensions.Dimension) -> str:
    """A filter's name, with what its value is where that is not plain text."""
    if dimension.values == dimensions.CHANNEL:
        return f"{dimension.name} ({', '.join(CHANNELS)})"
    return f"{dimension.name} ({dimension.hint})" if dimension.hint else dimension.name


Filters = Annotated[
    dict[str, str] | None,
    Field(
        description=(
            "Report filters by name: "
            + ", ".join(_described(d) for d in dimensions.supporting(dimensions.FILTER))
            + ". A value starting with ! means 'is not', with ~ 'contains'."
        )
    ),
]
Dimension = Annotated[
    str,
    Field(
        description=(
            ", ".join(d.name for d in dimensions.supporting(dimensions.BREAKDOWN))
            + " (the plural names, e.g. pages or sources, are aliases)"
        )
    ),
]


def _period(
    range_: str | None, from_date: str | None, to_date: str | None, filters: dict[str, str] | None
) -> dict[str, Any]:
    return {"range": range_, "from": from_date, "to": to_date, **(filters or {})}


def build(stats: Callable[[], StatsApi]) -> MCPServer:
    """The tools, each reading through ``stats()``: the stats API with the caller's key."""
    server = MCPServer("Sightline", instructions=INSTRUCTIONS, version=__version__)

    def reports(site_id: int, kind: str) -> str:
        return f"/api/sites/{site_id}/reports/{kind}"

    @server.tool(annotations=READ_ONLY)
    async def list_sites() -> dict[str, Any]:
        """The sites this key may read: id, name, domain and time zone of each."""
        answer = await stats().get("/api/sites", {})
        keep = ("id", "name", "domain", "timezone", "created_at")
        return {"sites": [{name: site.get(name) for name in keep} for site in answer["sites"]]}

    def period_report(kind: str, about: str) -> None:
        """A tool answering one report of a period, with the comparison (summary, time series)."""

        async def report(
            site_id: SiteId,
            range: Range = None,
            from_date: FromDate = None,
            to_date: ToDate = None,
            compare: Compare = None,
            filters: Filters = None,
        ) -> dict[str, Any]:
            params = {**_period(range, from_date, to_date, filters), "compare": compare}
            result: dict[str, Any] = await stats().get(reports(site_id, kind), params)
            return result

        server.add_tool(report, name=kind, description=about, annotations=READ_ONLY)

    period_report(
        "summary", "Unique visitors, visits, pageviews, views per visit, bounce rate and visit duration."
    )
    period_report(
        "timeseries",
        "The figures hour by hour (periods up to two days) or day by day, with the site's notes.",
    )

    @server.tool(annotations=READ_ONLY)
    async def breakdown(
        site_id: SiteId,
        dimension: Dimension,
        range: Range = None,
        from_date: FromDate = None,
        to_date: ToDate = None,
        filters: Filters = None,
        limit: Annotated[int | None, Field(ge=1, le=100, description="Rows, 1 to 100 (default 10).")] = None,
        offset: Annotated[int | None, Field(ge=0, le=100_000, description="Rows to skip.")] = None,
        search: Annotated[str | None, Field(description="Only values containing this text.")] = None,
        name: Annotated[str | None, Field(description="The custom event, with dimension=props.")] = None,
    ) -> dict[str, Any]:
        """The top values of one dimension with their figures (pages, sources, countries, ...)."""
        params = {
            **_period(range, from_date, to_date, filters),
            "dimension": dimension,
            "limit": limit,
            "offset": offset,
            "search": search,
            "name": name,
        }
        result: dict[str, Any] = await stats().get(reports(site_id, "breakdown"), params)
        return result

    @server.tool(annotations=READ_ONLY)
    async def goals(
        site_id: SiteId,
        range: Range = None,
        from_date: FromDate = None,
        to_date: ToDate = None,
        filters: Filters = None,
    ) -> dict[str, Any]:
        """Every goal of the site: converting visitors, conversions, conversion rate, revenue."""
        params = {**_period(range, from_date, to_date, filters), "dimension": "goals", "limit": 100}
        result: dict[str, Any] = await stats().get(reports(site_id, "breakdown"), params)
        return result

    @server.tool(annotations=READ_ONLY)
    async def funnel(
        site_id: SiteId,
        steps: Annotated[
            list[str],
            Field(
                min_length=2,
                max_length=8,
                description="2 to 8 steps in order within a visit: page:/path (globs allowed) or event:name.",
            ),
        ],
        range: Range = None,
        from_date: FromDate = None,
        to_date: ToDate = None,
        filters: Filters = None,
    ) -> dict[str, Any]:
        """How many visitors went through each step, the conversion and drop-off between steps."""
        params = {**_period(range, from_date, to_date, filters), "step": steps}
        result: dict[str, Any] = await stats().get(reports(site_id, "funnel"), params)
        return result

    @server.tool(annotations=READ_ONLY)
    async def realtime(site_id: SiteId) -> dict[str, Any]:
        """Visitors and pageviews of the last five minutes, with the pages being viewed."""
        result: dict[str, Any] = await stats().get(reports(site_id, "realtime"), {})
        return result

    return server
