"""The e-mail opt-out against a real SMTP server: every digest carries its recipient's one-click
unsubscribe link (in the text, the HTML and the List-Unsubscribe headers); the link turns that
member's e-mails about that site off without signing in, the job then leaves them out, and the
member turns them on again in the console."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest

from sightline.database import open_database
from sightline.database.schema import sites
from sightline.mail.subscriptions import recipients
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.support.http import TLS
from tests.support.server import LiveServer, create_owner
from tests.support.smtp import SmtpServer
from tests.support.team import new_member


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


def receiving(server: LiveServer, site_id: int) -> list[str]:
    """Who the e-mail job sends the site's digests and notices to now."""
    database = open_database(
        server.database_url or f"sqlite:///{server.data_dir / 'sightline.db'}", migrate=False
    )
    try:
        with database.begin() as conn:
            site = conn.execute(sites.select().where(sites.c.id == site_id)).one()._mapping
            return [r.email for r in recipients(conn, site)]
    finally:
        database.dispose()


def test_a_digests_unsubscribe_link_stops_that_members_e_mails_without_signing_in(
    mailing: tuple[LiveServer, httpx.Client], smtp: SmtpServer
) -> None:
    server, owner = mailing
    site_id = int(
        owner.post("/api/sites", json={"name": "Bakery", "domain": "bakery.example.com"}).json()["id"]
    )
    other_id = int(owner.post("/api/sites", json={"name": "Mill", "domain": "mill.example.com"}).json()["id"])
    viewer = new_member(server, owner, "viewer")
    viewer_email = viewer.get("/api/me").json()["email"]
    assert receiving(server, site_id) == [OWNER_EMAIL, viewer_email]

    sent = owner.post(f"/api/sites/{site_id}/email-reports/send", json={"kind": "weekly"})
    assert sent.status_code == 200, sent.text
    message = smtp.wait_for(1)[-1]
    header = str(message["List-Unsubscribe"])
    found = re.fullmatch(r"<(http://[^>]+/unsubscribe/[A-Za-z0-9_-]{40,})>", header)
    assert found, header
    link = found.group(1)
    assert link.startswith(server.origin)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    plain, html = message.get_body(preferencelist=("plain",)), message.get_body(preferencelist=("html",))
    assert plain is not None
    assert html is not None
    assert f"Stop e-mails about Bakery: {link}" in plain.get_content()
    assert f'href="{link}"' in html.get_content()

    with httpx.Client(verify=TLS, timeout=30) as stranger:  # no session, no Origin: the link alone
        # Opening the link (as a mail provider's link scanner does) only asks.
        page = stranger.get(link)
        assert page.status_code == 200
        assert "Stop e-mails about Bakery?" in page.text
        assert OWNER_EMAIL in page.text
        assert f'<form method="post" action="{link.removeprefix(server.origin)}"' in page.text
        assert receiving(server, site_id) == [OWNER_EMAIL, viewer_email]
        # Its button unsubscribes (a plain form post, no Origin check: the token is the authority).
        page = stranger.post(link)
        assert page.status_code == 200
        assert "You are unsubscribed from Bakery" in page.text
        assert receiving(server, site_id) == [viewer_email]
        assert "already unsubscribed" in stranger.get(link).text
        assert OWNER_EMAIL in receiving(server, other_id), "another site's e-mails stay on"
        assert owner.get(f"/api/sites/{site_id}/email-reports/subscription").json()["enabled"] is False

        undone = stranger.post(f"{link}/undo")
        assert undone.status_code == 200
        assert "again" in undone.text
        assert receiving(server, site_id) == [OWNER_EMAIL, viewer_email]

        # A mail client's one-click button (RFC 8058): a POST with this form body.
        one_click = stranger.post(link, data={"List-Unsubscribe": "One-Click"})
        assert one_click.status_code == 200
        assert receiving(server, site_id) == [viewer_email]
        assert stranger.get(link[:-6] + "nope00").status_code == 404

    back = owner.put(f"/api/sites/{site_id}/email-reports/subscription", json={"enabled": True})
    assert back.status_code == 200
    assert back.json()["enabled"] is True
    assert receiving(server, site_id) == [OWNER_EMAIL, viewer_email]
    # A viewer changes nothing else, but chooses their own e-mails.
    assert (
        viewer.put(f"/api/sites/{site_id}/email-reports/subscription", json={"enabled": False}).status_code
        == 200
    )
    assert receiving(server, site_id) == [OWNER_EMAIL]
    assert viewer.post(f"/api/sites/{site_id}/email-reports/send", json={"kind": "weekly"}).status_code == 403
    missing = owner.put(
        f"/api/sites/{uuid.uuid4().int % 10**9 + 10**6}/email-reports/subscription", json={"enabled": True}
    )
    assert missing.status_code == 404
