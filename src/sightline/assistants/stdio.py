"""``sightline mcp``: the tools over stdio for an assistant on this machine, reading a running
server's stats API over HTTP with an API key (``--api-url``, ``SIGHTLINE_API_KEY``)."""

from __future__ import annotations

import sys

import httpx

from sightline.assistants import tools
from sightline.assistants.stats import StatsApi


def run(api_url: str, api_key: str | None) -> int:
    if not api_key:
        print(
            "sightline mcp: an API key is needed: create one on the console's Team page and set "
            "SIGHTLINE_API_KEY (or --api-key).",
            file=sys.stderr,
        )
        return 2
    client = httpx.AsyncClient(base_url=api_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=120)
    api = StatsApi(client)
    tools.build(lambda: api).run("stdio")
    return 0
