"""Request-scoped helpers shared by the handlers: the running context and who is asking."""

from __future__ import annotations

from fastapi import Request

from sightline.clientaddr import client_address
from sightline.context import Context
from sightline.teams.principal import Principal


def context(request: Request) -> Context:
    ctx: Context = request.app.state.ctx
    return ctx


def member(request: Request) -> Principal:
    """Who the guard found: the signed-in member (or API key), their role and their sites."""
    who: Principal = request.state.user
    return who


def owner(request: Request) -> Principal:
    """Who is asking, as handlers scope data: ``.id`` is the team owner's id, whose sites these are.

    The guard has already checked the role and, for a viewer, the site the request names."""
    return member(request)


def client_ip(request: Request) -> str:
    """The request's client address under ``--trusted-proxies`` and ``--client-address-header``
    (see ``sightline.clientaddr``)."""
    settings = context(request).settings
    return client_address(request.scope, settings.trusted_proxies, str(settings.client_address_header))
