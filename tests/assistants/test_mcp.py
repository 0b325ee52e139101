"""Analytics an assistant can read: the MCP tools through the official SDK's own client, over
HTTP at /mcp and over stdio from `sightline mcp`, answer the same figures as the stats API,
limited to the key's sites."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import pytest

from sightline.database import open_database
from tests.reports import helpers
from tests.support.server import LiveServer

if TYPE_CHECKING:
    from mcp import Client

# The MCP SDK is imported by the tests that use it: imported with the module, it cost each xdist
# worker's collection about 0.6 s of CPU, though one worker runs these tests.

TOOLS = {"list_sites", "summary", "timeseries", "breakdown", "goals", "funnel", "realtime"}


@pytest.fixture(scope="module")
def shop(console_server: LiveServer, owner_module: httpx.Client) -> dict[str, Any]:
    """Two sites with visits, a goal, and a key scoped to the first."""
    made = {}
    for name in ("first", "second"):
        site = owner_module.post(
            "/api/sites", json={"name": f"MCP {name}", "domain": f"mcp-{uuid.uuid4().hex[:8]}.example.com"}
        )
        assert site.status_code == 201, site.text
        made[name] = int(site.json()["id"])
    goal = {"name": "Pricing", "kind": "page", "match": "exact", "path": "/pricing"}
    assert owner_module.post(f"/api/sites/{made['first']}/goals", json=goal).status_code == 201
    now = datetime.now(UTC).replace(microsecond=0)
    rows = [
        helpers.pageview(made["first"], now - timedelta(hours=h, minutes=1), f"v{h}", path, source)
        for h, (path, source) in enumerate([("/", "google.com"), ("/pricing", None), ("/docs", "google.com")])
    ] + [helpers.pageview(made["first"], now - timedelta(minutes=2), "v9", "/pricing")]
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    helpers.wait_caught_up(owner_module)
    key = owner_module.post(
        "/api/keys",
        json={"name": "assistant", "site_id": made["first"], "scopes": ["stats:read", "sites:read"]},
    )
    assert key.status_code == 201, key.text
    made["key"] = key.json()["key"]
    return made


@pytest.fixture(scope="module")
def owner_module(console_server: LiveServer) -> Iterator[httpx.Client]:
    from tests.conftest import sign_in

    client = sign_in(console_server)
    yield client
    client.close()


def _api(server: LiveServer, key: str, path: str, **params: Any) -> Any:
    with httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        answer = c.get(path, params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()


def _calls(client_of: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each tool call's structured answer, or ('error', text) when the tool refused."""

    async def run() -> list[Any]:
        out: list[Any] = []
        async with client_of() as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            out.append(names)
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    out.append(("error", " ".join(getattr(c, "text", "") for c in result.content)))
                else:
                    out.append(result.structured_content)
        return out

    return anyio.run(run)


def _same_figures(tool_answer: dict[str, Any], api_answer: dict[str, Any]) -> None:
    """The tool's answer is the API's, but for the moment each was computed (``range``' end)."""
    for name in ("range", "previous_range"):
        tool_answer.pop(name, None)
        api_answer.pop(name, None)
    assert tool_answer == api_answer


def test_the_tools_over_http_give_the_stats_apis_figures_for_the_keys_site(
    console_server: LiveServer, shop: dict[str, Any]
) -> None:
    first, key = shop["first"], shop["key"]
    url = f"{console_server.base_url}/mcp"

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @asynccontextmanager
    async def connect() -> AsyncIterator[Client]:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            yield client

    answers = _calls(
        connect,
        [
            ("list_sites", {}),
            ("summary", {"site_id": first, "range": "7d", "compare": True}),
            ("breakdown", {"site_id": first, "dimension": "pages", "limit": 5}),
            ("breakdown", {"site_id": first, "dimension": "sources", "filters": {"page": "/docs"}}),
            ("goals", {"site_id": first}),
            ("funnel", {"site_id": first, "steps": ["page:/", "page:/pricing"]}),
            ("timeseries", {"site_id": first, "range": "today"}),
            ("realtime", {"site_id": first}),
            ("summary", {"site_id": shop["second"]}),
            ("breakdown", {"site_id": first, "dimension": "nope"}),
        ],
    )
    assert answers[0] == TOOLS
    assert [site["id"] for site in answers[1]["sites"]] == [first]
    base = f"/api/sites/{first}/reports"
    summary = _api(console_server, key, f"{base}/summary", range="7d", compare="true")
    assert summary["current"]["visitors"] == 4
    _same_figures(answers[2], summary)
    _same_figures(answers[3], _api(console_server, key, f"{base}/breakdown", dimension="pages", limit=5))
    docs_sources = _api(console_server, key, f"{base}/breakdown", dimension="sources", page="/docs")
    assert [row["value"] for row in docs_sources["rows"]] == ["google.com"]
    _same_figures(answers[4], docs_sources)
    goals = _api(console_server, key, f"{base}/breakdown", dimension="goals", limit=100)
    assert [(row["value"], row["visitors"]) for row in goals["rows"]] == [("Pricing", 2)]
    _same_figures(answers[5], goals)
    funnel = _api(console_server, key, f"{base}/funnel", step=["page:/", "page:/pricing"])
    _same_figures(answers[6], funnel)
    _same_figures(answers[7], _api(console_server, key, f"{base}/timeseries", range="today"))
    assert answers[8]["visitors"] == 2  # v0 and v9 came in the last five minutes
    assert answers[9][0] == "error"
    assert "only on the site it was created for" in answers[9][1]
    assert answers[10][0] == "error"
    assert "dimension" in answers[10][1]


def test_the_http_endpoint_wants_a_valid_key(console_server: LiveServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in (
        {},
        {"Authorization": "Bearer sl_unknown_key_0123456789abcdef"},
        {"Authorization": "Basic x"},
    ):
        answer = httpx.post(
            f"{console_server.base_url}/mcp", json=body, headers={**headers, **auth}, timeout=30
        )
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["code"] == "invalid_api_key"
        assert answer.headers["www-authenticate"].startswith("Bearer")


def test_the_http_endpoint_wants_a_key_that_reads_stats_and_list_sites_wants_sites_read(
    console_server: LiveServer, shop: dict[str, Any], owner_module: httpx.Client
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    writer = owner_module.post(
        "/api/keys", json={"name": "no stats", "site_id": shop["first"], "scopes": ["events:write"]}
    ).json()["key"]
    answer = httpx.post(
        f"{console_server.base_url}/mcp",
        json=body,
        headers={**headers, "Authorization": f"Bearer {writer}"},
        timeout=30,
    )
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"]["code"] == "forbidden"
    assert "stats:read" in answer.json()["error"]["message"]
    reader = owner_module.post("/api/keys", json={"name": "stats only", "site_id": shop["first"]}).json()[
        "key"
    ]
    url = f"{console_server.base_url}/mcp"

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @asynccontextmanager
    async def connect() -> AsyncIterator[Client]:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {reader}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            yield client

    answers = _calls(connect, [("list_sites", {}), ("realtime", {"site_id": shop["first"]})])
    assert answers[1][0] == "error"
    assert "sites:read" in answers[1][1]
    assert answers[2]["visitors"] >= 0


def test_sightline_mcp_serves_the_same_tools_over_stdio(
    console_server: LiveServer, shop: dict[str, Any]
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    from mcp import Client, StdioServerParameters

    env["SIGHTLINE_API_KEY"] = shop["key"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sightline.cli", "mcp", "--api-url", console_server.base_url],
        env=env,
    )
    answers = _calls(lambda: Client(params), [("summary", {"site_id": shop["first"], "range": "7d"})])
    assert answers[0] == TOOLS
    summary = _api(console_server, shop["key"], f"/api/sites/{shop['first']}/reports/summary", range="7d")
    _same_figures(answers[1], summary)


def test_sightline_mcp_without_a_key_says_where_to_get_one(console_server: LiveServer) -> None:
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    done = subprocess.run(
        [sys.executable, "-m", "sightline.cli", "mcp", "--api-url", console_server.base_url],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "SIGHTLINE_API_KEY" in done.stderr
    assert done.stdout == ""  # nothing on stdout, where an assistant reads the protocol
