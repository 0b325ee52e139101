"""E-mail as a feature: the job that sends digests and notices, when an SMTP server is set."""

from __future__ import annotations

from sightline.database import Database
from sightline.features import Feature, HealthProbe, Job
from sightline.mail import job
from sightline.mail.sender import Mailer
from sightline.reports.service import StoreReader
from sightline.settings import Settings


def feature(settings: Settings, db: Database, store: StoreReader, mailer: Mailer | None) -> Feature:
    """Without ``--smtp-url`` (no ``mailer``) nothing is sent, so no job runs; the health service
    ``mail`` says so."""
    sender = job.MailJob(db, store, mailer, settings.console_origin) if mailer is not None else None
    runner = job.periodic(sender, float(settings.mail_check_seconds)) if sender is not None else None
    return Feature(
        "mail",
        probes=[HealthProbe("mail", job.health_probe(sender, runner))],
        jobs=[Job.periodic(runner)] if runner is not None else [],
        settings=["smtp_url", "smtp_from", "mail_check_seconds"],
    )
