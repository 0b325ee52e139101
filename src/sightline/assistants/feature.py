"""Assistants as a feature: the ``/mcp`` endpoint and the transport it runs while the server does."""

from __future__ import annotations

from starlette.routing import Route

from sightline.assistants.endpoint import PATH, McpEndpoint
from sightline.features import Feature, Job


def feature(endpoint: McpEndpoint) -> Feature:
    return Feature(
        "assistants",
        routes=[Route(PATH, endpoint, methods=["GET", "POST", "DELETE"])],
        jobs=[Job("assistants' transport", endpoint.running)],
    )
