"""Console pages served as HTML: ``GET /setup`` (first-run owner creation) and static assets."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from sightline.accounts.setup import setup_token_valid
from sightline.context import Context

router = APIRouter(include_in_schema=False)

TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(__file__).with_name("static")


@router.get("/setup")
def setup_page(request: Request, token: str = Query("", max_length=200)) -> HTMLResponse:
    ctx: Context = request.app.state.ctx
    with ctx.db.read() as conn:
        valid = setup_token_valid(conn, token)
    name = "setup.html" if valid else "setup-used.html"
    return HTMLResponse((TEMPLATES / name).read_text("utf-8"), status_code=200 if valid else 404)
