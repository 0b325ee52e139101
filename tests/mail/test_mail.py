"""E-mail reports against a real SMTP server (aiosmtpd): digests as a mail client reads them,
invitations by e-mail, each scheduled message sent once, and when digests are due."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import cast

import httpx
import pytest

from sightline.database import Database, open_database
from sightline.database.schema import sites
from sightline.mail.digest import last_full
from sightline.mail.job import MailJob, due, is_spike
from sightline.mail.sender import Mailer
from sightline.reports.service import StoreReader
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.reports.helpers import Event, create_site, insert_events, wait_caught_up
from tests.support.server import LiveServer, create_owner
from tests.support.smtp import SmtpServer


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    yield server
    server.stop()


@pytest.fixture
def mailing(start_server: StartServer, smtp: SmtpServer) -> Iterator[tuple[LiveServer, httpx.Client]]:
    server = start_server(env={"SIGHTLINE_SMTP_URL": smtp.url, "SIGHTLINE_SMTP_FROM": "reports@example.com"})
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    yield server, owner
    owner.close()


def _visit(site_id: int, at: datetime, visitor: str, path: str) -> Event:
    return Event(
        site_id,
        at,
        visitor,
        f"s-{visitor}",
        "pageview",
        path,
        None,
        None,
        None,
        None,
        "Chrome",
        "Linux",
        "desktop",
    )


def test_a_weekly_digest_arrives_as_text_and_html_with_the_change_against_the_week_before(
    mailing: tuple[LiveServer, httpx.Client], smtp: SmtpServer
) -> None:
    server, owner = mailing
    site_id = int(
        owner.post("/api/sites", json={"name": "Bakery", "domain": "bakery.example.com"}).json()["id"]
    )
    week = last_full("weekly", datetime.now(UTC).date())
    start = datetime.combine(week.first, datetime.min.time(), UTC) + timedelta(hours=12)
    rows = [_visit(site_id, start + timedelta(days=d), f"v{d}", "/pricing") for d in (0, 2, 4)]
    rows.append(_visit(site_id, start - timedelta(days=3), "before", "/"))
    database = open_database(f"sqlite:///{server.data_dir / 'sightline.db'}")
    try:
        insert_events(database, rows)
    finally:
        database.dispose()
    wait_caught_up(owner)
    response = owner.post(f"/api/sites/{site_id}/email-reports/send", json={"kind": "weekly"})
    assert response.status_code == 200, response.text
    message = smtp.wait_for(1)[-1]
    assert message["To"] == OWNER_EMAIL
    assert "reports@example.com" in message["From"]
    assert message["Subject"] == f"Weekly report for Bakery: {week.first} to {week.last}"
    assert message.get_content_type() == "multipart/alternative"
    plain = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    assert plain is not None
    assert html is not None
    text = plain.get_content()
    assert "Visitors: 3 (+200 % against the period before)" in text
    assert "/pricing: 3 visitors" in text
    assert f"{server.origin}/sites/{site_id}/reports?range=custom&from={week.first}&to={week.last}" in text
    markup = html.get_content()
    assert "<table" in markup
    assert "<li>/pricing: 3 visitors</li>" in markup
    bad = owner.post(f"/api/sites/{site_id}/email-reports/send", json={"kind": "daily"})
    assert bad.status_code == 422


def test_an_invitation_is_e_mailed_with_its_link(
    mailing: tuple[LiveServer, httpx.Client], smtp: SmtpServer
) -> None:
    _, owner = mailing
    email = f"new-{uuid.uuid4().hex[:6]}@example.com"
    created = owner.post("/api/invitations", json={"email": email, "role": "viewer"}).json()
    assert created["email_sent"] is True
    message = smtp.wait_for(1)[-1]
    assert message["To"] == email
    plain = message.get_body(preferencelist=("plain",))
    assert plain is not None
    assert created["url"] in plain.get_content()


def test_without_smtp_sending_a_digest_says_how_to_set_it_up(owner: httpx.Client) -> None:
    site_id = int(
        owner.post("/api/sites", json={"name": "X", "domain": f"m{uuid.uuid4().hex[:8]}.example.com"}).json()[
            "id"
        ]
    )
    response = owner.post(f"/api/sites/{site_id}/email-reports/send", json={"kind": "monthly"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "smtp_not_configured"
    assert (
        owner.post("/api/invitations", json={"email": "x@example.com", "role": "viewer"}).json()["email_sent"]
        is False
    )


def test_a_scheduled_message_goes_out_once_per_period_and_recipient(db: Database, smtp: SmtpServer) -> None:
    _, site_id = create_site(db, f"once-{uuid.uuid4().hex[:6]}.example.com")
    job = MailJob(
        db, cast(StoreReader, None), Mailer.from_url(smtp.url, "reports@example.com"), "http://console"
    )
    assert job._send_once(site_id, "weekly:2026-11-16", "a@example.com", "S", "text", "<p>html</p>")
    assert not job._send_once(site_id, "weekly:2026-11-16", "a@example.com", "S", "text", "<p>html</p>")
    assert job._send_once(site_id, "weekly:2026-11-16", "b@example.com", "S", "text", "<p>html</p>")
    assert job._send_once(site_id, "weekly:2026-11-23", "a@example.com", "S", "text", "<p>html</p>")
    assert [r[0] for r in smtp.recipients] == ["a@example.com", "b@example.com", "a@example.com"]


def test_a_failed_send_is_tried_again_next_time(db: Database) -> None:
    _, site_id = create_site(db, f"fail-{uuid.uuid4().hex[:6]}.example.com")
    closed = SmtpServer().start()
    url = closed.url
    closed.stop()
    job = MailJob(db, cast(StoreReader, None), Mailer.from_url(url, "r@example.com"), "http://console")
    assert not job._send_once(site_id, "spike:2026-11-23", "a@example.com", "S", "t", "h")
    assert job._claim(site_id, "spike:2026-11-23", "a@example.com"), "the failed send left no claim behind"


def test_digests_are_due_on_mondays_and_the_first_of_the_month_from_seven() -> None:
    assert due(datetime(2026, 11, 23, 6, 59)) == []
    assert due(datetime(2026, 11, 23, 7, 0)) == ["weekly"]
    assert due(datetime(2026, 12, 1, 9, 0)) == ["monthly"]
    assert due(datetime(2027, 2, 1, 8, 0)) == ["weekly", "monthly"]
    assert due(datetime(2026, 11, 24, 12, 0)) == []
    week = last_full("weekly", date(2026, 11, 23))
    assert (week.first, week.last) == (date(2026, 11, 16), date(2026, 11, 22))
    month = last_full("monthly", date(2026, 3, 1))
    assert (month.first, month.last) == (date(2026, 2, 1), date(2026, 2, 28))


def test_a_spike_is_many_visitors_against_a_quiet_week_not_a_busy_one() -> None:
    assert not is_spike(9, 0)
    assert is_spike(10, 0)
    assert is_spike(50, 2016 * 5)
    assert not is_spike(50, 2016 * 20)


LINE_BREAKERS = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x9b"]


@pytest.mark.parametrize("breaker", LINE_BREAKERS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKERS])
def test_a_site_name_with_a_line_separator_or_control_character_is_refused(
    owner: httpx.Client, breaker: str
) -> None:
    made = owner.post(
        "/api/sites", json={"name": f"Bake{breaker}ry", "domain": f"{uuid.uuid4().hex[:8]}.example.com"}
    )
    assert made.status_code == 422, made.text
    assert made.json()["error"]["field"] == "name"
    site = owner.post("/api/sites", json={"name": "Plain", "domain": f"{uuid.uuid4().hex[:8]}.example.com"})
    changed = owner.patch(f"/api/sites/{site.json()['id']}", json={"name": f"A{breaker}B"})
    assert changed.status_code == 422, changed.text


def test_a_digest_of_a_site_named_before_the_rule_goes_out_on_one_line(
    mailing: tuple[LiveServer, httpx.Client], smtp: SmtpServer
) -> None:
    server, owner = mailing
    site_id = int(
        owner.post("/api/sites", json={"name": "Old", "domain": "old-name.example.com"}).json()["id"]
    )
    database = open_database(f"sqlite:///{server.data_dir / 'sightline.db'}")
    try:
        with database.begin() as conn:
            conn.execute(
                sites.update().where(sites.c.id == site_id).values(name="Old\u2028Bake\u0085ry\u2029")
            )
    finally:
        database.dispose()
    keep_alive = owner.post(f"/api/sites/{site_id}/email-reports/send", json={"kind": "weekly"})
    assert keep_alive.status_code == 200, keep_alive.text
    message = smtp.wait_for(1)[-1]
    assert str(message["Subject"]).startswith("Weekly report for Old Bake ry : ")
    assert owner.get("/api/me").status_code == 200
