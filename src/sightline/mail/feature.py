"""E-mail as a feature: the job that sends digests and notices, when an SMTP server is set."""

from __future__ import annotations

from sightline.database import Database
from sightline.features import Feature, Job
from sightline.mail import job
from sightline.mail.sender import Mailer
from sightline.reports.service import StoreReader
from sightline.settings import Settings


def feature(settings: Settings, db: Database, store: StoreReader, mailer: Mailer | None) -> Feature:
    """Without ``--smtp-url`` (no ``mailer``) nothing is sent, so no job runs."""
    jobs = []
    if mailer is not None:
        sender = job.MailJob(db, store, mailer, settings.console_origin)
        jobs.append(Job.periodic(job.periodic(sender, float(settings.mail_check_seconds))))
    return Feature("mail", jobs=jobs, settings=["smtp_url", "smtp_from", "mail_check_seconds"])
