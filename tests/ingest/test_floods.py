"""Floods: one address sending one site more batches a minute than the threshold is counted and
shown in health with the sites it hit, and dropped only when the operator turns that on."""

from __future__ import annotations

import time

import httpx
import pytest

from sightline.database import open_database
from sightline.ingest.floods import MAX_TRACKED, FloodWatch
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event, stored
from tests.support.http import TLS
from tests.support.server import create_owner


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_batches_over_the_threshold_are_counted_per_site_and_address_within_a_minute() -> None:
    clock = Clock()
    watch = FloodWatch(3, drop=False, clock=clock)
    assert [watch.over(1, "a.example", "203.0.113.9") for _ in range(5)] == [False, False, False, True, True]
    assert not watch.over(1, "a.example", "203.0.113.10")  # another address
    assert not watch.over(2, "b.example", "203.0.113.9")  # another site
    assert not watch.over(1, "a.example", None)  # no address known: never a flood
    clock.now += 60  # a new minute starts the counts again
    assert not watch.over(1, "a.example", "203.0.113.9")
    assert watch.report() == {
        "threshold_per_minute": 3,
        "dropping": False,
        "batches_over": 2,
        "last_at": "2027-01-15T08:00:00+00:00",
        "sites": ["a.example"],
    }
    advice = watch.advice()
    assert advice is not None
    assert "a.example" in advice
    assert "--ingest-drop-floods" in advice
    clock.now += 3601
    assert watch.advice() is None  # an hour later the advice is gone; the figures stay


def test_no_advice_is_given_while_floods_are_dropped_or_none_was_seen() -> None:
    assert FloodWatch(3, drop=False).advice() is None
    dropping = FloodWatch(1, drop=True)
    dropping.over(1, "a.example", "203.0.113.9")
    assert dropping.over(1, "a.example", "203.0.113.9")
    assert dropping.advice() is None


def test_the_addresses_counted_in_one_minute_are_bounded() -> None:
    watch = FloodWatch(1, drop=True, clock=Clock())
    for n in range(MAX_TRACKED):
        watch.over(1, "a.example", f"a{n}")
    assert not watch.over(1, "a.example", "new")
    assert not watch.over(1, "a.example", "new")  # not tracked, so never a flood
    assert watch.over(1, "a.example", "a0")  # those tracked still are


@pytest.mark.parametrize("drop", [False, True])
def test_a_flood_reaches_health_and_is_stored_or_dropped_as_the_operator_chose(
    start_server: StartServer, drop: bool
) -> None:
    env = {"SIGHTLINE_INGEST_FLOOD_BATCHES_PER_MINUTE": "5"}
    if drop:
        env["SIGHTLINE_INGEST_DROP_FLOODS"] = "true"
    server = start_server(env=env)
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        site = Site.create(owner, "localhost:18070")
        while time.time() % 60 > 40:  # the counts start again each minute: send within one
            time.sleep(0.5)
        with Visitor(server.base_url, site) as visitor:
            for n in range(8):
                assert visitor.send(batch(site, event(f"e{n}"))).status_code == 202
        ingest = owner.get("/api/health").json()["services"]["ingest"]
        assert ingest["floods"]["batches_over"] == 3
        assert ingest["floods"]["sites"] == ["localhost:18070"]
        assert ingest["floods"]["dropping"] is drop
        assert ingest["dropped"]["flood"] == (3 if drop else 0)
        assert ("advice" in ingest) is not drop
        db = open_database(
            server.database_url or f"sqlite:///{server.data_dir / 'sightline.db'}", migrate=False
        )
        try:
            assert len(stored(db, site)) == (5 if drop else 8)
        finally:
            db.dispose()
    finally:
        owner.close()


def test_a_backends_events_are_floods_by_the_client_address_they_name(start_server: StartServer) -> None:
    server = start_server(
        env={"SIGHTLINE_INGEST_FLOOD_BATCHES_PER_MINUTE": "3", "SIGHTLINE_INGEST_DROP_FLOODS": "true"}
    )
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        site = Site.create(owner, "localhost:18071")
        made = owner.post("/api/keys", json={"name": "b", "site_id": site.id, "scopes": ["events:write"]})
        headers = {"Authorization": f"Bearer {made.json()['key']}"}
        while time.time() % 60 > 40:  # the counts start again each minute: send within one
            time.sleep(0.5)
        with httpx.Client(verify=TLS, base_url=server.base_url, headers=headers, timeout=30) as backend:
            for n, address in enumerate(["203.0.113.9"] * 5 + ["203.0.113.10"] * 2 + [None] * 5):
                body: dict[str, object] = {"batch_id": f"flood-batch-{n:05d}", "events": [event(f"e{n}")]}
                if address is not None:
                    body["client"] = {"address": address}
                assert backend.post("/api/events", json=body).status_code == 202
        ingest = owner.get("/api/health").json()["services"]["ingest"]
        assert ingest["dropped"]["flood"] == 2  # the 4th and 5th of one address; none without one
        db = open_database(
            server.database_url or f"sqlite:///{server.data_dir / 'sightline.db'}", migrate=False
        )
        try:
            assert len(stored(db, site)) == 10
        finally:
            db.dispose()
    finally:
        owner.close()
