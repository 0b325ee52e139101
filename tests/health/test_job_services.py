"""The jobs on the job runner in ``GET /api/health``: the e-mail job (``mail``) and the recordings'
retention (``recording_retention``), each with its last and next run and a failure in plain words,
on a running server of either database."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any, cast

import httpx
import pytest

from sightline.database import Database
from sightline.health.registry import HealthRegistry
from sightline.mail import job as mail_job
from sightline.mail.job import MailJob
from sightline.mail.sender import Mailer
from sightline.recordings.retention import Cleanup
from sightline.recordings.service import Recordings
from sightline.reports.service import StoreReader
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.reports.helpers import create_site
from tests.support.server import create_owner
from tests.support.smtp import SmtpServer

MONDAY_MORNING = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)  # a weekly digest is due


def _services(owner: httpx.Client, *names: str) -> dict[str, Any]:
    """The services once each has run at least once (both jobs run at start)."""
    deadline = time.monotonic() + 30
    while True:
        services: dict[str, Any] = owner.get("/api/health").json()["services"]
        if all(services.get(name, {}).get("next_run_at") for name in names) or time.monotonic() > deadline:
            return services
        time.sleep(0.2)


def test_health_shows_the_e_mail_job_and_the_recordings_retention_with_their_last_and_next_run(
    start_server: StartServer, database_url: str
) -> None:
    smtp = SmtpServer().start()
    try:
        server = start_server(
            database_url,
            env={
                "SIGHTLINE_SMTP_URL": smtp.url,
                "SIGHTLINE_SMTP_FROM": "reports@example.com",
                "SIGHTLINE_MAIL_CHECK_SECONDS": "600",
            },
        )
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        try:
            services = _services(owner, "mail", "recording_retention")
        finally:
            owner.close()
    finally:
        smtp.stop()
    mail, recordings = services["mail"], services["recording_retention"]
    for service in (mail, recordings):
        assert service["status"] == "ok", service
        last, following = (datetime.fromisoformat(service[k]) for k in ("last_run_at", "next_run_at"))
        assert last < following
        assert (service["last_error"], service["failing_since"], service["problem"]) == (None, None, None)
    assert mail["enabled"] is True
    assert (mail["last_messages_sent"], mail["last_messages_failed"]) == (0, 0)
    wait = datetime.fromisoformat(mail["next_run_at"]) - datetime.fromisoformat(mail["last_run_at"])
    assert 590 <= wait.total_seconds() <= 610
    assert recordings["retention_days"] == 30
    assert recordings["last_recordings_deleted"] == 0


def test_without_smtp_health_says_e_mail_is_not_set_up(start_server: StartServer) -> None:
    server = start_server()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    try:
        mail = owner.get("/api/health").json()["services"]["mail"]
    finally:
        owner.close()
    assert mail["status"] == "ok"
    assert mail["enabled"] is False
    assert mail["next_run_at"] is None


def test_e_mails_that_could_not_go_out_make_the_mail_service_degraded_with_what_to_do(db: Database) -> None:
    create_site(db, f"mailfail-{uuid.uuid4().hex[:6]}.example.com")
    closed = SmtpServer().start()
    url = closed.url
    closed.stop()
    job = MailJob(db, cast(StoreReader, None), Mailer.from_url(url, "r@example.com"), "http://console")
    health = HealthRegistry()
    runner = mail_job.periodic(job)
    health.register("mail", mail_job.health_probe(job, runner))
    job.run_once(MONDAY_MORNING)  # the site's digest cannot be made or sent
    mail = health.service("mail")
    assert mail is not None
    assert mail["status"] == "degraded"
    assert mail["last_messages_failed"] >= 1
    assert "could not be sent on the last run" in mail["problem"]
    assert "--smtp-url" in mail["fix"]


def test_a_failing_e_mail_job_says_since_when_what_it_means_and_what_to_do(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = MailJob(
        db, cast(StoreReader, None), Mailer.from_url("smtp://127.0.0.1:1", "r@example.com"), "http://c"
    )
    health = HealthRegistry()
    runner = mail_job.periodic(job)
    health.register("mail", mail_job.health_probe(job, runner))

    def unreachable(now: datetime | None = None) -> int:
        raise OSError("the database is unreachable")

    monkeypatch.setattr(runner, "run", unreachable)
    assert not runner.run_once()
    assert not runner.run_once()
    mail = health.service("mail")
    assert mail is not None
    assert mail["status"] == "degraded"
    assert mail["failing_since"] is not None
    assert mail["last_error"] == "OSError"
    assert mail["problem"].startswith("The last run of the e-mail job failed (OSError; 2 failed runs")
    assert "go out at the first run that succeeds" in mail["problem"]
    assert "sightline.mail" in mail["fix"]
    monkeypatch.undo()
    monkeypatch.setattr(runner, "run", lambda: 0)
    assert runner.run_once()
    mail = health.service("mail")
    assert mail is not None
    assert (mail["status"], mail["failing_since"], mail["problem"]) == ("ok", None, None)


def test_a_failing_recordings_retention_is_degraded_saying_what_stays_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = Cleanup(cast(Recordings, None), 30)
    health = HealthRegistry()
    health.register("recording_retention", job.probe)

    def unreachable() -> None:
        raise OSError("the recordings' storage is unreachable")

    monkeypatch.setattr(job.periodic, "run", unreachable)
    assert not job.periodic.run_once()
    service = health.service("recording_retention")
    assert service is not None
    assert service["status"] == "degraded"
    assert service["retention_days"] == 30
    assert service["problem"] == (
        "The last run of the recordings' retention failed (OSError; 1 failed run since the server "
        "started). Recordings past the retention period stay stored until a run succeeds."
    )
    assert "sightline.recordings" in service["fix"]
