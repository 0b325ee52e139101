"""``GET /metrics`` of a real server: what it counts, and who may read it."""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from sightline.metrics.buckets import LatencyBuckets
from sightline.metrics.endpoint import is_loopback
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, owner_of
from tests.ingest.helpers import CHROME, Site, Visitor, batch, event, wait_until
from tests.recordings.helpers import chunk, new_recording_id, page_events, post_chunk, recording_site
from tests.support.server import LiveServer, create_owner

TOKEN = "metrics-token-0123456789abcdef"
_ports = itertools.count(31000)


def outside_address() -> str | None:
    """An address of this machine that is not loopback, to play a client from elsewhere."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the route's address
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if is_loopback(address) else address


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Listens on every interface, logs JSON at debug level, has no metrics token."""
    directory = tmp_path_factory.mktemp("metrics")
    env = {"SIGHTLINE_LOG_FORMAT": "json", "SIGHTLINE_LOG_LEVEL": "debug"}
    live = LiveServer(directory / "data", env=env, host="0.0.0.0")
    live.start()
    create_owner(live, OWNER_EMAIL, OWNER_PASSWORD)
    yield live
    live.stop()


@pytest.fixture(scope="module")
def owner(server: LiveServer) -> Iterator[httpx.Client]:
    yield from owner_of(server)


def scrape(base_url: str, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(base_url + "/metrics", headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_count_stored_events_drops_by_reason_and_requests_by_route(
    server: LiveServer, owner: httpx.Client
) -> None:
    site = Site.create(owner, f"localhost:{next(_ports)}")
    before = scrape(server.base_url)
    with Visitor(server.base_url, site) as visitor:
        assert visitor.send(batch(site, event(), event("signup"))).status_code == 202
        assert visitor.send(batch(site, event())).status_code == 202
        assert visitor.send(b"{not json").status_code == 400
        unknown = batch(site, event())
        unknown["key"] = "no-such-key-0000"
        assert visitor.send(unknown).status_code == 404
    assert owner.get(f"/api/sites/{site.id}/reports/summary").status_code in (200, 422)
    after = scrape(server.base_url)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("sightline_ingest_accepted_events_total") == 3
    assert grew("sightline_ingest_accepted_batches_total") == 2
    assert grew("sightline_ingest_dropped_batches_total", reason="malformed_json") == 1
    assert grew("sightline_ingest_dropped_batches_total", reason="unknown_site") == 1
    assert ("sightline_ingest_dropped_batches_total", (("reason", "overloaded"),)) in after
    assert grew("sightline_ingest_commit_duration_seconds_count") >= 1
    assert value(after, "sightline_ingest_queue_events") == 0
    assert value(after, "sightline_ingest_writer_up") == 1
    requests = "sightline_http_requests_total"
    assert grew(requests, route="/i/events", method="POST", status="202") == 2
    assert grew(requests, route="/i/events", method="POST", status="404") == 1
    summary = {"route": "/api/sites/{site_id}/reports/summary", "method": "GET"}
    assert grew("sightline_http_request_duration_seconds_count", **summary) == 1
    routes = {dict(labels).get("route", "") for _, labels in after}
    assert not [route for route in routes if f"/{site.id}/" in route]  # templates, never paths
    assert value(after, "sightline_store_up") == 1  # the store's hook (the rollup job stands in)


def test_metrics_count_recording_chunks_and_survey_refusals(server: LiveServer, owner: httpx.Client) -> None:
    site = recording_site(owner)
    before = scrape(server.base_url)
    stored = post_chunk(server, site, new_recording_id(), 0, chunk(page_events(1_700_000_000_000)))
    assert stored.status_code == 202, stored.text
    refused = httpx.post(
        server.base_url + "/i/feedback/responses", content=b"[]", headers={"Origin": site.origin}
    )
    assert refused.status_code == 422
    after = scrape(server.base_url)
    assert (
        value(after, "sightline_recordings_stored_chunks_total")
        - value(before, "sightline_recordings_stored_chunks_total")
        == 1
    )
    assert value(after, "sightline_recordings_used_bytes") > 0
    assert value(after, "sightline_survey_responses_refused_total", reason="invalid_field") == 1


def test_metrics_without_a_token_answer_only_clients_on_this_machine(server: LiveServer) -> None:
    address = outside_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to connect from")
    response = httpx.get(f"http://{address}:{server.port}/metrics", timeout=30)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert "--metrics-token" in response.json()["error"]["message"]
    assert httpx.get(f"http://127.0.0.1:{server.port}/metrics", timeout=30).status_code == 200


def test_metrics_with_a_token_need_it_from_everywhere(start_server: StartServer) -> None:
    live = start_server(env={"SIGHTLINE_METRICS_TOKEN": TOKEN})
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": TOKEN}):
        response = httpx.get(live.base_url + "/metrics", headers=headers, timeout=30)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"]["code"] == "unauthorized"
    samples = scrape(live.base_url, Authorization=f"Bearer {TOKEN}")
    assert value(samples, "sightline_ingest_writer_up") == 1
    assert TOKEN not in "".join(live.output)


def test_every_log_line_of_a_request_carries_its_request_id(server: LiveServer, owner: httpx.Client) -> None:
    """A chunk whose folder cannot be made fails in a worker thread; its error line has the id."""
    site = recording_site(owner)
    recording_id = new_recording_id()
    blocker = Path(server.data_dir) / "recordings" / recording_id[:2] / recording_id
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("in the way")
    url = f"{server.base_url}/i/recordings/{recording_id}/chunks"
    response = httpx.post(
        url,
        params={"key": site.key, "seq": "0"},
        content=chunk(page_events(1_700_000_000_000)),
        headers={"Origin": site.origin, "User-Agent": CHROME, "X-Request-ID": "proxy-given-id-42"},
        timeout=30,
    )
    assert response.status_code == 503
    assert response.headers["x-request-id"] == "proxy-given-id-42"

    def lines() -> list[dict[str, object]]:
        parsed = [json.loads(line) for line in list(server.output) if line.startswith("{")]
        return [line for line in parsed if line.get("request_id") == "proxy-given-id-42"]

    wait_until(lambda: len(lines()) >= 2)
    loggers = {line["logger"] for line in lines()}
    assert {"sightline.ingest", "sightline.access"} <= loggers
    failure = next(line for line in lines() if line["logger"] == "sightline.ingest")
    assert failure["level"] == "ERROR"
    assert "exc_info" in failure
    own = httpx.get(server.base_url + "/healthz", timeout=30).headers["x-request-id"]
    assert own != "proxy-given-id-42"
    assert len(own) > 3
    assert "127.0.0.1" not in "".join(line for line in server.output if "sightline.access" in line)


def test_latency_buckets_count_each_sample_once_at_or_below_its_bound() -> None:
    buckets = LatencyBuckets((0.1, 1.0))
    for seconds in (0.05, 0.1, 0.5, 2.0):
        buckets.observe(seconds)
    assert list(buckets.cumulative()) == [("0.1", 2), ("1.0", 3), ("+Inf", 4)]
    assert buckets.count == 4
    assert buckets.total == pytest.approx(2.65)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("192.0.2.2", False),
        ("", False),
        ("x", False),
    ],
)
def test_only_loopback_addresses_count_as_this_machine(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
