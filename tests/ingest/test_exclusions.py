"""Per-site excluded addresses: answered 202, nothing stored, counted as a drop reason in health."""

from __future__ import annotations

import httpx

from sightline.database import Database
from tests.ingest.helpers import Site, Visitor, batch, dropped, stored


def test_events_from_an_excluded_range_are_answered_202_stored_nowhere_and_counted(
    visitor: Visitor, site: Site, ingest_db: Database, ingest_owner: httpx.Client
) -> None:
    site.change(excluded_addresses=["127.0.0.0/8"])
    before = dropped(ingest_owner)["excluded_address"]
    response = visitor.send(batch(site))
    assert response.status_code == 202
    assert stored(ingest_db, site) == []
    assert dropped(ingest_owner)["excluded_address"] == before + 1
    site.change(excluded_addresses=["203.0.113.7"])  # another address: counted again
    assert visitor.send(batch(site)).status_code == 202
    assert len(stored(ingest_db, site)) == 1


def test_excluded_addresses_are_normalised_and_bad_entries_refused_naming_the_entry(site: Site) -> None:
    site.change(excluded_addresses=["10.1.2.3/8", " 2001:DB8::1 ", "10.0.0.0/8", "198.51.100.4/32"])
    assert site.record()["excluded_addresses"] == ["10.0.0.0/8", "2001:db8::1", "198.51.100.4"]
    response = site.owner.patch(f"/api/sites/{site.id}", json={"excluded_addresses": ["10.0.0.1", "nope"]})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "excluded_addresses.1"
    assert "nope" in response.json()["error"]["message"]


def test_privacy_fields_default_off_and_retention_accepts_null_for_the_servers_setting(site: Site) -> None:
    record = site.record()
    assert (record["cookieless"], record["excluded_addresses"], record["retention_days"]) == (False, [], None)
    site.change(retention_days=90, cookieless=True)
    assert (site.record()["retention_days"], site.record()["cookieless"]) == (90, True)
    site.change(retention_days=None)
    assert site.record()["retention_days"] is None
    for bad in (0, 36501, "30", 1.5):
        response = site.owner.patch(f"/api/sites/{site.id}", json={"retention_days": bad})
        assert response.status_code == 422, bad
        assert response.json()["error"]["field"] == "retention_days"
