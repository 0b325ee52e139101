"""Request-scoped helpers shared by the handlers: the running context and the signed-in owner."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from sightline.clientaddr import client_address
from sightline.context import Context


def context(request: Request) -> Context:
    ctx: Context = request.app.state.ctx
    return ctx


def owner(request: Request) -> Any:
    """The signed-in owner row the guard found (id, email, created_at)."""
    return request.state.user


def client_ip(request: Request) -> str:
    """The request's client address under ``--trusted-proxies`` (see ``sightline.clientaddr``)."""
    return client_address(request.scope, context(request).settings.trusted_proxies)
