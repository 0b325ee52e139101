from __future__ import annotations

import httpx

from tests.support.http import TLS
from tests.support.server import LiveServer


def test_health_reports_each_service_with_its_status_and_latency(owner: httpx.Client) -> None:
    response = owner.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] in {"ok", "degraded", "down"}
    assert {"status", "services", "version", "checked_at"} <= set(body)
    database = body["services"]["database"]
    assert database["status"] == "ok"
    assert database["latency_ms"] >= 0
    assert database["engine"] in {"sqlite", "postgresql"}
    disk = body["services"]["disk"]
    assert disk["free_bytes"] > 0
    assert disk["total_bytes"] >= disk["free_bytes"]
    for service in body["services"].values():
        assert service["status"] in {"ok", "degraded", "down"}
        assert isinstance(service["latency_ms"], (int, float))


def test_health_needs_a_session_but_liveness_does_not(console_server: LiveServer) -> None:
    with httpx.Client(verify=TLS, base_url=console_server.base_url) as anonymous:
        assert anonymous.get("/api/health").status_code == 401
        live = anonymous.get("/healthz")
    assert live.status_code == 200
    assert live.json() == {"status": "ok"}


def test_the_openapi_document_is_served_only_to_signed_in_owners(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    with httpx.Client(verify=TLS, base_url=console_server.base_url) as anonymous:
        assert anonymous.get("/api/openapi.json").status_code == 401
    document = owner.get("/api/openapi.json").json()
    assert document["openapi"].startswith("3.")
    assert "/api/sites/{site_id}/retry" in document["paths"]
    assert "/api/login" in document["paths"]


def test_console_responses_carry_the_security_headers(owner: httpx.Client) -> None:
    response = owner.get("/api/me")
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    refused = owner.get("/api/sites/12345678")
    assert refused.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in refused.headers["content-security-policy"]
