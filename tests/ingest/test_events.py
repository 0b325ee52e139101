"""Accepted batches: what is stored, how it is enriched, retries stored once, the site's connection."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx

from sightline.database import Database
from tests.ingest.helpers import IPHONE, Site, Visitor, batch, batch_id, event, stored, wait_until
from tests.support.http import TLS
from tests.support.server import LiveServer


def test_an_accepted_batch_is_answered_202_with_its_count_and_id(
    visitor: Visitor, ingest_db: Database
) -> None:
    body = batch(visitor.site, event("pageview"), event("signup", props={"plan": "pro"}))
    response = visitor.send(body)
    assert response.status_code == 202, response.text
    assert response.json() == {"accepted": 2, "batch_id": body["batch_id"]}
    assert [row.name for row in stored(ingest_db, visitor.site)] == ["pageview", "signup"]


def test_a_stored_event_carries_the_fields_reports_need(visitor: Visitor, ingest_db: Database) -> None:
    before = datetime.now(UTC)
    sent = event(
        "signup",
        visitor_id="visitor-1",
        session_id="session-1",
        url=f"{visitor.site.origin}/pricing?utm_source=ignored",
        path="/pricing",
        referrer="https://www.google.com/search?q=analytics",
        props={"plan": "pro", "seats": 3, "yearly": True, "price": 9.5},
        utm={"source": "newsletter", "medium": "email", "campaign": "spring", "term": "t", "content": "c"},
        screen=390,
    )
    assert visitor.send(batch(visitor.site, sent)).status_code == 202
    (row,) = stored(ingest_db, visitor.site)
    assert (row.visitor_id, row.session_id, row.name, row.path) == (
        "visitor-1",
        "session-1",
        "signup",
        "/pricing",
    )
    assert row.referrer_source == "Google"
    assert row.referrer == "https://www.google.com/search"  # no query: search terms stay private
    assert (row.utm_source, row.utm_medium, row.utm_campaign, row.utm_term, row.utm_content) == (
        "newsletter",
        "email",
        "spring",
        "t",
        "c",
    )
    assert (row.browser, row.os, row.device_type, row.screen_class) == (
        "Chrome",
        "Windows",
        "desktop",
        "mobile",
    )
    assert json.loads(row.props) == {"plan": "pro", "seats": 3, "yearly": True, "price": 9.5}
    assert before - timedelta(seconds=1) <= row.time <= datetime.now(UTC) + timedelta(seconds=1)


def test_absent_values_are_stored_as_sql_null(visitor: Visitor, ingest_db: Database) -> None:
    bare = event("pageview", url="", referrer="", props={}, screen=None)
    assert visitor.send(batch(visitor.site, bare)).status_code == 202
    absent = ["referrer_source", "referrer", "utm_source", "utm_medium", "utm_campaign", "utm_term"]
    absent += ["utm_content", "screen_class", "props"]
    (row,) = stored(ingest_db, visitor.site)
    assert all(getattr(row, column) is None for column in absent), row
    # NULL, not a number or a text that reads back as None: filters with IS NULL find them.
    columns = ", ".join(f"{c} IS NULL" for c in absent)
    with ingest_db.read() as conn:
        flags = conn.exec_driver_sql(f"SELECT {columns} FROM events WHERE id = {row.id}").one()
    assert all(flags), dict(zip(absent, flags, strict=True))


def test_a_phone_is_a_mobile_device_and_utm_tags_come_from_the_url_when_not_sent(
    ingest_server: LiveServer, site: Site, ingest_db: Database
) -> None:
    with Visitor(ingest_server.base_url, site, user_agent=IPHONE) as phone:
        url = f"{site.origin}/?utm_source=mastodon&utm_campaign=launch"
        assert phone.send(batch(site, event(url=url, path="/", screen=1920))).status_code == 202
    (row,) = stored(ingest_db, site)
    assert (row.browser, row.os, row.device_type, row.screen_class) == (
        "Mobile Safari",
        "iOS",
        "mobile",
        "desktop",
    )
    assert (row.utm_source, row.utm_campaign, row.utm_medium) == ("mastodon", "launch", None)
    assert row.referrer_source == "mastodon"  # no outside referrer: the utm_source names it


def test_a_referrer_on_the_site_itself_is_not_a_source(visitor: Visitor, ingest_db: Database) -> None:
    origin = visitor.site.origin
    sent = [
        event(url=f"{origin}/b", path="/b", referrer=f"{origin}/a"),
        event(url=f"{origin}/c", path="/c", referrer="https://news.ycombinator.com/item?id=1"),
        event(url=f"{origin}/d", path="/d", referrer="https://blog.example.org/post"),
    ]
    assert visitor.send(batch(visitor.site, *sent)).status_code == 202
    assert [row.referrer_source for row in stored(ingest_db, visitor.site)] == [
        None,
        "Hacker News",
        "blog.example.org",
    ]


def test_the_client_clock_only_orders_events_within_a_batch(visitor: Visitor, ingest_db: Database) -> None:
    wrong_clock = 1_000_000  # the visitor's clock is decades off; only differences count
    sent = [
        event("first", ts=wrong_clock),
        event("second", ts=wrong_clock + 1500),
        event("third", ts=wrong_clock + 3000),
    ]
    assert visitor.send(batch(visitor.site, *sent)).status_code == 202
    rows = stored(ingest_db, visitor.site)
    assert [r.name for r in sorted(rows, key=lambda r: r.time)] == ["first", "second", "third"]
    assert rows[2].time - rows[0].time == timedelta(milliseconds=3000)
    assert abs(rows[2].time - datetime.now(UTC)) < timedelta(seconds=5)


def test_an_event_older_than_a_day_in_its_batch_is_clamped_to_a_day(
    visitor: Visitor, ingest_db: Database
) -> None:
    sent = [event("ancient", ts=0), event("now", ts=10 * 86_400_000)]
    assert visitor.send(batch(visitor.site, *sent)).status_code == 202
    ancient, now = stored(ingest_db, visitor.site)
    assert now.time - ancient.time == timedelta(days=1)


def test_an_event_keeps_its_age_when_its_batch_arrives_late(visitor: Visitor, ingest_db: Database) -> None:
    # The SDK stamps each attempt with sent_at; a batch held back by an outage keeps its times.
    wrong_clock = 5_000_000
    body = batch(visitor.site, event("queued", ts=wrong_clock - 90_000))
    body["sent_at"] = wrong_clock
    assert visitor.send(body).status_code == 202
    (row,) = stored(ingest_db, visitor.site)
    age = datetime.now(UTC) - row.time
    assert timedelta(seconds=85) < age < timedelta(seconds=100)


def test_an_integer_beyond_64_bits_in_props_is_stored_as_a_number(
    visitor: Visitor, ingest_db: Database
) -> None:
    # JavaScript's JSON.stringify(1e20) is "100000000000000000000": a valid number, not an error.
    body = batch(visitor.site, event("big", props={"n": 10**20, "small": 7, "negative": -(10**25)}))
    assert visitor.send(json.dumps(body)).status_code == 202
    (row,) = stored(ingest_db, visitor.site)
    assert json.loads(row.props) == {"n": 1e20, "small": 7, "negative": -1e25}


def test_a_number_no_float_can_hold_is_refused_naming_the_prop(visitor: Visitor, ingest_db: Database) -> None:
    body = json.dumps(batch(visitor.site, event("huge", props={"n": 0}))).replace(
        '"n": 0', '"n": ' + "9" * 400
    )
    response = visitor.send(body)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "events.0.props.n"
    assert stored(ingest_db, visitor.site) == []


def test_a_retried_batch_is_answered_again_and_stored_once(visitor: Visitor, ingest_db: Database) -> None:
    body = batch(visitor.site, event("a"), event("b"), event("c"))
    answers = [visitor.send(body) for _ in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 202]
    assert all(a.json() == {"accepted": 3, "batch_id": body["batch_id"]} for a in answers)
    assert [row.name for row in stored(ingest_db, visitor.site)] == ["a", "b", "c"]


def test_the_same_batch_sent_concurrently_is_stored_once(visitor: Visitor, ingest_db: Database) -> None:
    import concurrent.futures

    body = batch(visitor.site, event("once"))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: visitor.send(body).status_code, range(16)))
    assert codes == [202] * 16
    assert len(stored(ingest_db, visitor.site)) == 1


def test_the_same_batch_id_on_two_sites_is_two_batches(
    ingest_server: LiveServer, ingest_owner: httpx.Client, ingest_db: Database, site: Site
) -> None:
    other = Site.create(ingest_owner, f"127.0.0.1:{site.domain.rsplit(':', 1)[1]}")
    shared = batch_id()
    with Visitor(ingest_server.base_url, site) as one, Visitor(ingest_server.base_url, other) as two:
        assert one.send(batch(site, event("one"), bid=shared)).status_code == 202
        assert two.send(batch(other, event("two"), bid=shared)).status_code == 202
    assert [r.name for r in stored(ingest_db, site)] == ["one"]
    assert [r.name for r in stored(ingest_db, other)] == ["two"]


def test_the_first_accepted_event_connects_the_site_and_later_ones_move_last_event_at(
    visitor: Visitor,
) -> None:
    site = visitor.site
    assert site.record()["connection"]["state"] == "pending"
    assert visitor.send(batch(site)).status_code == 202
    first = site.record()["connection"]
    assert first["state"] == "connected"
    assert first["first_event_at"] is not None
    assert first["last_event_at"] == first["first_event_at"]

    def moved() -> bool:
        assert visitor.send(batch(site)).status_code == 202
        return bool(site.record()["connection"]["last_event_at"] > first["last_event_at"])

    wait_until(moved, timeout=10)
    assert site.record()["connection"]["first_event_at"] == first["first_event_at"]


def test_refused_batches_leave_a_new_site_pending(ingest_server: LiveServer, site: Site) -> None:
    with Visitor(ingest_server.base_url, site) as visitor:
        assert visitor.send(batch(site, event(name=""))).status_code == 422
    with httpx.Client(
        verify=TLS, base_url=ingest_server.base_url, headers={"Origin": "https://elsewhere.example"}
    ) as stranger:
        assert stranger.post("/i/events", json=batch(site)).status_code == 403
    assert site.record()["connection"]["state"] == "pending"


def test_ingest_figures_appear_in_service_health(visitor: Visitor, ingest_owner: httpx.Client) -> None:
    assert visitor.send(batch(visitor.site, event(), event())).status_code == 202
    ingest = ingest_owner.get("/api/health").json()["services"]["ingest"]
    assert ingest["status"] == "ok"
    assert ingest["accepted_events"] >= 2
    assert ingest["accepted_batches"] >= 1
    assert ingest["queue_capacity"] == 200
    assert ingest["queue_depth"] == 0
    assert ingest["last_commit_ms"] > 0
    assert set(ingest["dropped"]) >= {"bot", "invalid", "malformed_json", "origin_not_allowed", "overloaded"}


def test_the_visitors_language_is_kept_as_its_primary_subtag_only(
    visitor: Visitor, ingest_db: Database
) -> None:
    sent = [
        event(path="/a", language="pt-BR"),  # an event that says its language (navigator.language)
        event(path="/b"),  # one that does not: the request's Accept-Language
        event(path="/c", language="not a language"),  # a tag that is none: Accept-Language too
    ]
    response = visitor.send(batch(visitor.site, *sent), **{"Accept-Language": "de-CH, de;q=0.9, en;q=0.8"})
    assert response.status_code == 202, response.text
    assert [(row.path, row.language) for row in stored(ingest_db, visitor.site)] == [
        ("/a", "pt"),
        ("/b", "de"),
        ("/c", "de"),
    ]


def test_a_visitor_whose_browser_names_no_language_has_none_stored(
    visitor: Visitor, ingest_db: Database
) -> None:
    assert visitor.send(batch(visitor.site, event()), **{"Accept-Language": "*"}).status_code == 202
    assert [row.language for row in stored(ingest_db, visitor.site)] == [None]
