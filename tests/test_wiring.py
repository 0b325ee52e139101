"""Every feature in the one list is plugged in: in a running server its routes answer, its health
probes show in ``GET /api/health``, its metrics in ``GET /metrics``, and its jobs start and stop."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from fastapi import APIRouter, FastAPI
from prometheus_client.parser import text_string_to_metric_families
from starlette.routing import BaseRoute

from sightline.accounts.users import create_user
from sightline.app import create_app
from sightline.context import Context
from sightline.features import Feature, Jobs
from sightline.settings import BY_NAME, load
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.support import waits
from tests.support.ports import free_port

_PARAM = re.compile(r"\{[^}]+\}")


@contextmanager
def serving(app: FastAPI, port: int) -> Iterator[str]:
    """``app`` under uvicorn, its lifespan included, in a thread of this process."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=server.run, name="wired-server")
    thread.start()
    deadline = time.monotonic() + waits.START
    while not server.started:
        assert thread.is_alive(), "the server stopped while starting"
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(waits.START)


def routes_of(feature: Feature) -> Iterator[tuple[str, str]]:
    """(method, template) of every route the feature brings."""
    found: list[BaseRoute] = list(feature.sdk_routes)
    for route in feature.routes:
        found.extend(route.routes if isinstance(route, APIRouter) else [route])
    for route in found:
        methods = sorted((getattr(route, "methods", None) or {"GET"}) - {"HEAD"})
        yield methods[0], str(getattr(route, "path", ""))


def metric_samples(base_url: str) -> list[tuple[str, dict[str, str]]]:
    scraped = httpx.get(base_url + "/metrics", timeout=30)
    assert scraped.status_code == 200, scraped.text
    return [
        (sample.name, sample.labels)
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
    ]


def test_every_feature_in_the_list_brings_its_routes_probes_metrics_and_jobs_to_a_running_server(
    tmp_path: Path,
) -> None:
    port = free_port()
    settings = load(
        {
            "data_dir": str(tmp_path / "data"),
            "port": port,
            "smtp_url": "smtp://127.0.0.1:1",  # the mail job runs only with one; it finds nothing to send
        },
        environ={},
    )
    app = create_app(settings)
    features: list[Feature] = app.state.features
    jobs: Jobs = app.state.jobs
    ctx: Context = app.state.ctx
    names = [feature.name for feature in features]
    assert len(set(names)) == len(names), "each feature is listed once"
    expected_jobs = [job.name for feature in features for job in feature.jobs]
    assert {"recordings", "ingest", "store", "surveys", "mail", "imports", "assistants"} <= set(names)
    with ctx.db.begin() as conn:
        create_user(conn, OWNER_EMAIL, OWNER_PASSWORD)

    with serving(app, port) as base_url:
        assert jobs.now == expected_jobs  # every job started, in the list's order

        with httpx.Client(base_url=base_url, headers={"Origin": base_url}, timeout=30) as owner:
            signed_in = owner.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD})
            assert signed_in.status_code == 200, signed_in.text
            services = owner.get("/api/health").json()["services"]
            for feature in features:
                for probe in feature.probes:
                    assert probe.name in services, f"{feature.name}'s probe {probe.name} is not in health"

            # Each route, reached by a request of its path, is counted under its own template.
            expected_routes = {(feature.name, *route) for feature in features for route in routes_of(feature)}
            for _, method, template in expected_routes:
                owner.request(method, _PARAM.sub("1", template))
        answered = {
            (labels["method"], labels["route"])
            for name, labels in metric_samples(base_url)
            if name == "sightline_http_requests_total"
        }
        missing = sorted(route for route in expected_routes if route[1:] not in answered)
        assert not missing, f"routes no request reached: {missing}"

        exposed = {name for name, _ in metric_samples(base_url)}
        for feature in features:
            for collector in feature.collectors:
                for family in collector.collect():
                    assert {sample.name for sample in family.samples} <= exposed, feature.name

    assert jobs.now == []  # every job stopped
    for feature in features:
        for setting in feature.settings:
            assert setting in BY_NAME, f"{feature.name} owns an unknown setting {setting}"
    owned = [setting for feature in features for setting in feature.settings]
    assert len(set(owned)) == len(owned), "a setting is owned by one feature at most"
