"""Every feature in the one list is plugged in: in a running server its routes answer, its health
probes show in ``GET /api/health``, its metrics in ``GET /metrics``, and its jobs start and stop."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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
from tests.support.server import AS_INSTALLED

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
    listed = [job for feature in features for job in feature.jobs]
    expected_jobs = [job.name for job in listed if job.first] + [job.name for job in listed if not job.first]
    assert {"recordings", "ingest", "store", "surveys", "mail", "imports", "assistants"} <= set(names)
    with ctx.db.begin() as conn:
        create_user(conn, OWNER_EMAIL, OWNER_PASSWORD)

    with serving(app, port) as base_url:
        assert jobs.now == expected_jobs  # every job started, in the list's order (the first ones first)

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

        # A figure shows once there is one (the store's self-check counts after its first pass), so
        # the server is scraped until it exposes every sample the features' collectors give here.
        deadline = time.monotonic() + waits.EVENTUALLY
        while True:
            exposed = {name for name, _ in metric_samples(base_url)}
            absent = {
                (feature.name, sample.name)
                for feature in features
                for collector in feature.collectors
                for family in collector.collect()
                for sample in family.samples
                if sample.name not in exposed
            }
            if not absent or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert not absent, f"metrics a feature gives that the server does not expose: {sorted(absent)}"

    assert jobs.now == []  # every job stopped
    for feature in features:
        for setting in feature.settings:
            assert setting in BY_NAME, f"{feature.name} owns an unknown setting {setting}"
    owned = [setting for feature in features for setting in feature.settings]
    assert len(set(owned)) == len(owned), "a setting is owned by one feature at most"


def test_the_server_process_leaves_numpy_duckdb_and_httpx_to_the_routes_that_use_them() -> None:
    """A server starts often (each test server, each restart): importing the app loads none of the
    libraries only some routes need (the overview's numpy, the store process's DuckDB, the MCP
    endpoint's httpx client), as the server process starts."""
    lazy = ("numpy", "duckdb", "httpx")
    check = f"import sys, sightline.app; print(sorted(m for m in {lazy!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(AS_INSTALLED)}
    found = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env, check=True)
    assert found.stdout.strip() == "[]", found.stdout
