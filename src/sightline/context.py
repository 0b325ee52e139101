"""What one running Sightline holds: settings, database, and the long-lived helpers.

Built whole, once, in ``app.create_app`` (no field is filled in later) and handed to every surface
through ``request.app.state.ctx``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlsplit

from sightline.accounts.sessions import Lifetimes
from sightline.accounts.throttle import FailureWindow, LoginThrottle
from sightline.database import Database
from sightline.health import HealthRegistry
from sightline.imports.jobs import Importer
from sightline.mail.sender import Mailer
from sightline.settings import Settings
from sightline.sites.check import ConnectionChecker
from sightline.store.client import StoreClient
from sightline.teams.limits import RequestLimit


@dataclass
class Context:
    settings: Settings
    db: Database
    throttle: LoginThrottle
    checker: ConnectionChecker
    health: HealthRegistry
    store: StoreClient  # the analytics store every report reads (its process starts in the app's lifespan)
    importer: Importer  # the import jobs
    key_limit: RequestLimit = field(default_factory=lambda: RequestLimit(120))  # per API key
    share_limit: RequestLimit = field(default_factory=lambda: RequestLimit(120))  # per shared link
    mailer: Mailer | None = None  # with --smtp-url
    # Wrong passwords per shared link.
    share_failures: FailureWindow = field(default_factory=lambda: FailureWindow(12, 900))

    @property
    def lifetimes(self) -> Lifetimes:
        return Lifetimes(
            idle=timedelta(minutes=self.settings.session_idle_minutes),
            absolute=timedelta(hours=self.settings.session_max_hours),
        )

    @property
    def invitation_lifetime(self) -> timedelta:
        return timedelta(days=self.settings.invitation_days)

    @property
    def origin(self) -> str:
        return self.settings.console_origin


def build_context(settings: Settings, db: Database) -> Context:
    return Context(
        settings=settings,
        db=db,
        throttle=LoginThrottle(
            per_account=settings.login_max_failures,
            per_ip=settings.login_max_failures_per_ip,
            window_seconds=settings.login_throttle_minutes * 60,
        ),
        checker=ConnectionChecker(
            timeout=settings.check_timeout_seconds,
            min_interval=settings.check_min_interval_seconds,
            allow_private=settings.allow_private_addresses,
        ),
        health=HealthRegistry(),
        store=StoreClient(settings, db),
        # A zip may unpack to ten times the largest upload.
        importer=Importer(db, settings.data_path / "imports", int(settings.import_max_mb) * 2**20 * 10),
        mailer=_mailer(settings),
        key_limit=RequestLimit(settings.api_key_requests_per_minute),
        share_limit=RequestLimit(settings.share_requests_per_minute),
        share_failures=FailureWindow(max(3, settings.share_requests_per_minute // 10), 900),
    )


def _mailer(settings: Settings) -> Mailer | None:
    if not settings.smtp_url:
        return None
    host = urlsplit(settings.console_origin).hostname or "localhost"
    return Mailer.from_url(str(settings.smtp_url), str(settings.smtp_from or f"sightline@{host}"))
