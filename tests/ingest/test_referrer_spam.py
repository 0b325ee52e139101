"""Referrer spam: a batch whose referrer's host, or a parent domain of it, is on the shipped
community list or the site's own blocked referrers is answered 202 like any batch, stored nowhere,
and counted in health; the owner keeps the site's list through the sites API."""

from __future__ import annotations

import httpx
import pytest

from sightline.database import Database
from sightline.sites.referrers import spam_list
from tests.ingest.helpers import Visitor, batch, dropped, event, stored


def test_the_shipped_list_is_the_community_list() -> None:
    hosts = spam_list()
    assert len(hosts) == 2347
    assert "0-0.fr" in hosts
    assert "google.com" not in hosts


@pytest.mark.parametrize(
    "referrer",
    ["https://0-0.fr/", "http://www.0-0.fr/offer?x=1", "https://A.B.01casino-x.ru/path", "https://0-0.fr./"],
)
def test_a_referrer_on_the_spam_list_or_under_one_of_its_domains_is_answered_but_not_stored(
    visitor: Visitor, ingest_db: Database, ingest_owner: httpx.Client, referrer: str
) -> None:
    before = dropped(ingest_owner)["referrer_spam"]
    body = batch(visitor.site, event(referrer=referrer), event("signup"))
    answer = visitor.send(body)
    assert answer.status_code == 202, answer.text
    assert answer.json() == {"accepted": 2, "batch_id": body["batch_id"]}
    assert stored(ingest_db, visitor.site) == []
    assert dropped(ingest_owner)["referrer_spam"] == before + 1


@pytest.mark.parametrize(
    "referrer", ["", "https://www.google.com/search?q=x", "https://x0-0.fr/", "https://0-0.fr.example.com/"]
)
def test_other_referrers_are_stored(visitor: Visitor, ingest_db: Database, referrer: str) -> None:
    assert visitor.send(batch(visitor.site, event(referrer=referrer))).status_code == 202
    assert len(stored(ingest_db, visitor.site)) == 1


def test_the_owner_blocks_a_referrer_host_of_their_own_for_their_site(
    visitor: Visitor, ingest_db: Database, ingest_owner: httpx.Client
) -> None:
    site = visitor.site
    assert site.record()["blocked_referrers"] == []
    changed = ingest_owner.patch(
        f"/api/sites/{site.id}", json={"blocked_referrers": ["Spam.Example", "https://ads.other.test/x"]}
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["blocked_referrers"] == ["spam.example", "ads.other.test"]
    before = dropped(ingest_owner)["referrer_spam"]
    assert visitor.send(batch(site, event(referrer="https://deep.spam.example/"))).status_code == 202
    assert visitor.send(batch(site, event(referrer="https://ads.other.test/"))).status_code == 202
    assert stored(ingest_db, site) == []
    assert dropped(ingest_owner)["referrer_spam"] == before + 2
    assert visitor.send(batch(site, event(referrer="https://other.test/"))).status_code == 202
    assert len(stored(ingest_db, site)) == 1
    cleared = ingest_owner.patch(f"/api/sites/{site.id}", json={"blocked_referrers": []})
    assert cleared.json()["blocked_referrers"] == []
    assert visitor.send(batch(site, event(referrer="https://spam.example/"))).status_code == 202
    assert len(stored(ingest_db, site)) == 2


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("spam.example", "blocked_referrers"),
        (["spam example"], "blocked_referrers.0"),
        (["ok.example", "spam/path"], "blocked_referrers.1"),
        ([f"h{i}.example" for i in range(201)], "blocked_referrers"),
    ],
)
def test_a_bad_blocked_referrer_is_refused_naming_its_line(
    visitor: Visitor, ingest_owner: httpx.Client, value: object, field: str
) -> None:
    refused = ingest_owner.patch(f"/api/sites/{visitor.site.id}", json={"blocked_referrers": value})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == field
    assert visitor.site.record()["blocked_referrers"] == []
