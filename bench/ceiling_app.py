"""The machine's HTTP ceiling for bench_ingest: a trivial Starlette endpoint that only parses JSON.

Run by uvicorn exactly like ``sightline serve`` (uvloop, httptools, no access log), so the
difference between the two is what ingest itself costs.
"""

from __future__ import annotations

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


async def events(request: Request) -> Response:
    body = orjson.loads(await request.body())
    return Response(
        orjson.dumps({"accepted": len(body["events"]), "batch_id": body["batch_id"]}),
        status_code=202,
        media_type="application/json",
    )


app = Starlette(routes=[Route("/i/events", events, methods=["POST"])])
