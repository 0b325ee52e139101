"""``GET /metrics``: the Prometheus text format, for a token holder or a loopback client.

With ``--metrics-token T`` the request needs ``Authorization: Bearer T`` (compared in constant
time); without a token only clients on the loopback interface are answered, so a server reachable
from the internet never shows its figures to everyone. Behind a reverse proxy on the same machine
the client is the address the proxy forwards when ``--trusted-proxies`` names it
(``sightline.clientaddr``); otherwise every proxied request looks local: set a token there.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence

from anyio import to_thread
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.requests import Request
from starlette.responses import Response

from sightline.clientaddr import X_FORWARDED_FOR, Network, client_address
from sightline.errors import error_response


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class MetricsEndpoint:
    def __init__(
        self,
        registry: CollectorRegistry,
        token: str | None,
        trusted_proxies: Sequence[Network] | None,
        header: str = X_FORWARDED_FOR,
    ) -> None:
        self.registry = registry
        self.token = token.encode() if token else None
        self.trusted_proxies = trusted_proxies
        self.header = header

    async def handle(self, request: Request) -> Response:
        refusal = self.refusal(request)
        if refusal is not None:
            return refusal
        body = await to_thread.run_sync(generate_latest, self.registry)
        return Response(body, headers={"content-type": CONTENT_TYPE_LATEST, "cache-control": "no-store"})

    def refusal(self, request: Request) -> Response | None:
        if self.token is not None:
            scheme, _, given = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token):
                return None
            message = "Send the metrics token: Authorization: Bearer <--metrics-token>."
            return error_response(
                401, "unauthorized", message, headers={"www-authenticate": 'Bearer realm="metrics"'}
            )
        if is_loopback(client_address(request.scope, self.trusted_proxies, self.header)):
            return None
        message = "Metrics answer only on this machine; set --metrics-token to read them from elsewhere."
        return error_response(403, "forbidden", message)
