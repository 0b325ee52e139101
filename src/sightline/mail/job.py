"""The e-mail job: weekly digests (Mondays), monthly digests (the 1st), from 07:00 in each site's
time zone, and traffic-spike notices, to every member who may read the site.

Each (site, period, recipient) is written to ``mail_log`` before sending (a unique key), so a
message goes out once however often the job runs; a failed send removes its row to try again.
Every message carries its recipient's one-click unsubscribe link (``subscriptions``). Health's
service ``mail`` shows the job's last and next run and the sends that failed (``health_probe``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from sightline.database import Database
from sightline.database.schema import mail_log, sites
from sightline.database.types import utcnow
from sightline.health.registry import DEGRADED, OK, Probe, ServiceReport
from sightline.jobs import Periodic
from sightline.mail import digest
from sightline.mail.sender import Mailer
from sightline.mail.subscriptions import Recipient, recipients
from sightline.reports.params import Query
from sightline.reports.service import Report, StoreReader, realtime_of

log = logging.getLogger("sightline.mail")
SEND_FROM_HOUR = 7
# A spike: at least this many visitors in 5 minutes, and this many times the usual visits.
SPIKE_MIN_VISITORS = 10
SPIKE_FACTOR = 5
FIVE_MINUTES_PER_WEEK = 7 * 24 * 12
INTERVAL_SECONDS = 300.0


def due(local: datetime) -> list[str]:
    """The digests due at a site's local time: weekly on Mondays, monthly on the 1st, from 07:00."""
    if local.hour < SEND_FROM_HOUR:
        return []
    return [kind for kind, today in (("weekly", local.weekday() == 0), ("monthly", local.day == 1)) if today]


def is_spike(live_visitors: int, week_visits: int) -> bool:
    """Whether the last 5 minutes' visitors are a spike against the week's usual 5 minutes."""
    usual = week_visits / FIVE_MINUTES_PER_WEEK
    return live_visitors >= SPIKE_MIN_VISITORS and live_visitors >= SPIKE_FACTOR * max(usual, 1.0)


def with_footer(site: Any, text: str, html: str, unsubscribe: str) -> tuple[str, str]:
    """The message with the recipient's way out of the site's e-mails at its end."""
    name = str(site["name"])
    text += (
        f"\n--\nYou receive this as a member of the team of {name}. "
        f"Stop e-mails about {name}: {unsubscribe}\n"
    )
    html += (
        f'<hr><p style="font-size:12px;color:#666">You receive this as a member of the team of '
        f'{escape(name)}. <a href="{escape(unsubscribe)}">Unsubscribe from e-mails about '
        f"{escape(name)}</a> (turn them on again in the site's settings).</p>"
    )
    return text, html


class MailJob:
    def __init__(self, db: Database, store: StoreReader, mailer: Mailer, console_url: str) -> None:
        self.db = db
        self.store = store
        self.mailer = mailer
        self.console_url = console_url
        self.failed = 0  # messages (or sites' reports) that failed in the run under way
        self.last_sent: int | None = None  # of the last run that finished
        self.last_failed: int | None = None

    def _claim(self, site_id: int, period: str, recipient: str) -> bool:
        try:
            with self.db.begin() as conn:
                conn.execute(
                    insert(mail_log).values(
                        site_id=site_id, period=period, recipient=recipient, sent_at=utcnow()
                    )
                )
        except IntegrityError:
            return False
        return True

    def _send_once(
        self,
        site_id: int,
        period: str,
        to: str,
        subject: str,
        text: str,
        html: str,
        unsubscribe: str | None = None,
    ) -> bool:
        if not self._claim(site_id, period, to):
            return False
        try:
            self.mailer.send(to, subject, text, html, unsubscribe=unsubscribe)
        except Exception:
            log.exception("sending %s of site %s failed; trying again later", period, site_id)
            self.failed += 1
            with self.db.begin() as conn:
                conn.execute(
                    delete(mail_log).where(
                        mail_log.c.site_id == site_id, mail_log.c.period == period, mail_log.c.recipient == to
                    )
                )
            return False
        return True

    def send_digest(
        self, site: Any, kind: str, to: list[Recipient], now: datetime, *, once: bool = True
    ) -> int:
        span = digest.last_full(kind, digest.local_today(site, now))
        figures = digest.gather(self.store, site, span, now, self.db.engine)
        subject, text, html = digest.render(site, span, figures, self.console_url)
        sent = 0
        for recipient in to:
            link = recipient.unsubscribe_url(self.console_url)
            body, markup = with_footer(site, text, html, link)
            if once:
                sent += self._send_once(site["id"], span.key, recipient.email, subject, body, markup, link)
            else:
                self.mailer.send(recipient.email, subject, body, markup, unsubscribe=link)
                sent += 1
        return sent

    def spike(self, site: Any, now: datetime) -> tuple[int, float] | None:
        """(visitors of the last 5 minutes, usual visits per 5 minutes) when traffic spikes."""
        live = realtime_of(site, self.store, now)["visitors"]
        if live < SPIKE_MIN_VISITORS:
            return None
        week = Report(self.store, site, Query(range="7d"), now).summary()["current"]["visits"]
        return (live, week / FIVE_MINUTES_PER_WEEK) if is_spike(live, week) else None

    def send_spike(self, site: Any, to: list[Recipient], now: datetime) -> int:
        found = self.spike(site, now)
        if found is None:
            return 0
        live, usual = found
        day = digest.local_today(site, now).isoformat()
        link = f"{self.console_url}/sites/{site['id']}/reports?range=today"
        subject = f"Traffic spike on {site['name']}: {live} visitors right now"
        text = (
            f"{site['name']} ({site['domain']}) has {live} visitors in the last 5 minutes; "
            f"usually it has about {usual:.1f} visits in 5 minutes.\n\nSee who is coming: {link}\n"
        )
        name, domain = escape(str(site["name"])), escape(str(site["domain"]))
        html = (
            f"<p><strong>{live}</strong> visitors on {name} ({domain}) in the last 5 minutes; usually "
            f'about {usual:.1f} visits in 5 minutes.</p><p><a href="{escape(link)}">See who is coming</a></p>'
        )
        sent = 0
        for recipient in to:
            link = recipient.unsubscribe_url(self.console_url)
            body, markup = with_footer(site, text, html, link)
            sent += self._send_once(site["id"], f"spike:{day}", recipient.email, subject, body, markup, link)
        return sent

    def run_once(self, now: datetime | None = None) -> int:
        """Send whatever is due at ``now``; the number of messages sent."""
        now = now or utcnow()
        with self.db.begin() as conn:
            found = [row._mapping for row in conn.execute(select(sites))]
            rows = [(site, recipients(conn, site)) for site in found]
        sent = 0
        self.failed = 0
        for site, to in rows:
            local = now.astimezone(ZoneInfo(str(site["timezone"])))
            try:
                for kind in due(local):
                    sent += self.send_digest(site, kind, to, now)
                sent += self.send_spike(site, to, now)
            except Exception:
                log.exception("e-mail reports of site %s failed; trying again later", site["id"])
                self.failed += 1
        self.last_sent, self.last_failed = sent, self.failed
        return sent


def periodic(job: MailJob, interval: float = INTERVAL_SECONDS) -> Periodic:
    """The job, run every ``interval`` seconds while the server runs (``--mail-check-seconds``)."""
    return Periodic(
        "the e-mail job",
        job.run_once,
        interval,
        logger=log,
        effect="Digests and traffic-spike notices due meanwhile go out at the first run that succeeds.",
    )


def health_probe(job: MailJob | None, runner: Periodic | None) -> Probe:
    """Health service ``mail``: whether e-mail is set up, the job's last and next run, the messages
    the last run sent and those that failed, and a failure in plain words (``degraded`` while runs
    fail or the last one could not send every message)."""

    def probe() -> ServiceReport:
        if job is None or runner is None:
            return ServiceReport(
                OK, {"enabled": False, "last_run_at": None, "next_run_at": None, "problem": None, "fix": None}
            )
        figures = {
            "enabled": True,
            **runner.figures(),
            "last_messages_sent": job.last_sent,
            "last_messages_failed": job.last_failed,
        }
        if runner.failing_since is not None:
            return ServiceReport(DEGRADED, figures)
        if job.last_failed:
            figures["problem"] = (
                f"{job.last_failed} e-mail{'s' if job.last_failed != 1 else ''} could not be sent on the "
                "last run; each is tried again at the next run."
            )
            figures["fix"] = (
                "Check --smtp-url and that the SMTP server answers from this server; the server's log "
                "has each cause under the logger sightline.mail."
            )
            return ServiceReport(DEGRADED, figures)
        return ServiceReport(OK, figures)

    return probe
