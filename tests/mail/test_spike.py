"""The traffic-spike notice end to end: real traffic sent into a running server (as the SDK sends
it, from a browser's user agent) until the notice fires, read as a mail client parses it."""

from __future__ import annotations

import time
import uuid
from contextlib import closing

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.ingest.helpers import Site, Visitor, batch, event
from tests.support.server import create_owner
from tests.support.smtp import SmtpServer


def test_a_burst_of_visitors_sends_the_spike_notice_once_as_text_and_html(start_server: StartServer) -> None:
    smtp = SmtpServer().start()
    try:
        server = start_server(
            env={
                "SIGHTLINE_SMTP_URL": smtp.url,
                "SIGHTLINE_SMTP_FROM": "reports@example.com",
                "SIGHTLINE_MAIL_CHECK_SECONDS": "1",
                "SIGHTLINE_STORE_FEED_SECONDS": "0.2",
            }
        )
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        with closing(owner):
            site = Site.create(owner, f"launch-{uuid.uuid4().hex[:6]}.example.com")
            with Visitor(server.base_url, site) as browser:
                visitors = 0
                deadline = time.monotonic() + 90
                while not smtp.messages:  # one more visitor at a time, until the notice fires
                    assert time.monotonic() < deadline, f"no notice after {visitors} visitors"
                    code = f"visitor-{visitors:03d}-{uuid.uuid4().hex[:8]}"
                    sent = browser.send(
                        batch(
                            site,
                            event(
                                visitor_id=code,
                                session_id=f"s-{code}",
                                url=f"{site.origin}/launch",
                                path="/launch",
                            ),
                        )
                    )
                    assert sent.status_code == 202, sent.text
                    visitors += 1
                    time.sleep(0.15)
            live = owner.get(f"/api/sites/{site.id}/reports/realtime").json()
            assert live["visitors"] >= 10, "the visits were acknowledged but not stored"
            assert visitors >= 10, "the notice fired before the threshold"
            time.sleep(3)  # the job looks every second: the notice still goes out once today
            assert len(smtp.messages) == 1
            message = smtp.messages[0]
            assert message["To"] == OWNER_EMAIL
            subject = str(message["Subject"])
            assert subject.startswith(f"Traffic spike on Site {site.domain}: ")
            assert 10 <= int(subject.rsplit(": ", 1)[1].split()[0]) <= visitors
            assert message.get_content_type() == "multipart/alternative"
            assert [part.get_content_type() for part in message.iter_parts()] == ["text/plain", "text/html"]
            plain = message.get_body(preferencelist=("plain",))
            html = message.get_body(preferencelist=("html",))
            assert plain is not None
            assert html is not None
            link = f"{server.origin}/sites/{site.id}/reports?range=today"
            assert f"See who is coming: {link}" in plain.get_content()
            assert f'<a href="{link}">See who is coming</a>' in html.get_content()
            assert "visitors in the last 5 minutes" in plain.get_content()
            assert str(message["List-Unsubscribe"]).startswith(f"<{server.origin}/unsubscribe/")
    finally:
        smtp.stop()
