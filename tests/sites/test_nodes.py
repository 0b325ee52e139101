"""Two real servers on one PostgreSQL: a site change made through one reaches the other's
site-key cache at once (LISTEN/NOTIFY), not after the cache's 5 s lifetime."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

pytestmark = pytest.mark.postgres


def test_a_site_switched_off_on_one_node_is_refused_by_the_other_within_a_second(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.create_database()
    first = LiveServer(tmp_path / "node1", url).start()
    second = LiveServer(tmp_path / "node2", url).start()
    try:
        create_owner(first, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(first)
        site = Site.create(owner, "localhost:38300")
        with Visitor(second.base_url, site) as visitor:
            for _ in range(3):  # the second node now has the site in its cache
                assert visitor.send(batch(site, event())).status_code == 202
            site.change(collection_enabled=False)  # through the first node
            changed = time.monotonic()
            while (answer := visitor.send(batch(site, event()))).status_code == 202:
                assert time.monotonic() - changed < 5, "the second node answered from its stale cache"
                time.sleep(0.05)
            took = time.monotonic() - changed
            assert answer.status_code == 403
            assert answer.json()["error"]["code"] == "collection_disabled"
            assert took < 1.5, f"the change reached the second node after {took:.2f} s"
        owner.close()
    finally:
        second.stop()
        first.stop()
