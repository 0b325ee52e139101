"""One stats API call for a tool: ``GET`` with the caller's key, the answer or the API's error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from mcp.server.mcpserver.exceptions import ToolError

# Parameters whose value is a list in the reports API (repeated in the query string).
Params = Mapping[str, str | int | bool | list[str] | None]


class StatsApi:
    """The stats API of one Sightline server, read with one API key."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def get(self, path: str, params: Params) -> Any:
        query: list[tuple[str, str | int | float | bool | None]] = []
        for name, value in params.items():
            if value is None:
                continue
            if isinstance(value, bool):
                query.append((name, "true" if value else "false"))
            elif isinstance(value, list):
                query.extend((name, str(item)) for item in value)
            else:
                query.append((name, str(value)))
        try:
            response = await self.client.get(path, params=query)
        except httpx.HTTPError as exc:
            raise ToolError(f"The Sightline server could not be reached ({type(exc).__name__}).") from None
        if response.status_code == 200:
            return response.json()
        raise ToolError(_error_text(response))


def _error_text(response: httpx.Response) -> str:
    """The API's own message, with the parameter it names: what the assistant should change."""
    try:
        error = response.json()["error"]
        text = str(error["message"])
        field = error.get("field")
    except (ValueError, KeyError, TypeError):
        return f"The Sightline server answered {response.status_code}."
    return f"{text} (parameter: {field})" if field else text
