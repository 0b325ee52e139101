"""The ingest pipeline: an ordered list of small named steps, each of which may drop the batch.

parse -> validate -> authorise -> exclude -> filter_bots -> filter_spam -> watch_floods -> enrich ->
buffer -> commit

A step drops a batch by raising ``DropError`` with its reason; every reason is counted (health
figures) and answered as PROTOCOL.md says. Bots are answered 202 like everyone else, so they
learn nothing, but nothing of theirs is stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from anyio import to_thread

from sightline.health.disk import DATABASE, DiskGuard
from sightline.ingest import agents, batch
from sightline.ingest.batch import Batch, BatchError
from sightline.ingest.floods import FloodWatch
from sightline.ingest.protocol import Submit
from sightline.ingest.times import now_us
from sightline.ingest.writer import (
    GroupCommitter,
    Pending,
    QueueFullError,
    StorageUnavailableError,
    WriterDownError,
)
from sightline.sites import referrers
from sightline.sites.domains import host_of
from sightline.sites.lookup import MISS, SiteDirectory, SiteInfo
from sightline.sites.privacy import excluded

RETRY_AFTER_SECONDS = 2
NO_BROWSER = agents.Client(None, None, None, bot=False, headless=False)  # a backend's own event
DISK_FULL_MESSAGE = "The server's disk is almost full, so nothing new is stored; send this again later."

# Every reason a batch can be dropped for, with its answer (status, error code); None = 202.
DROP_REASONS: dict[str, tuple[int, str] | None] = {
    "body_too_large": (413, "body_too_large"),
    "malformed_json": (400, "malformed_json"),
    "invalid": (422, "invalid_field"),
    "unknown_site": (404, "unknown_site"),
    "origin_not_allowed": (403, "origin_not_allowed"),
    "collection_disabled": (403, "collection_disabled"),
    "bot": None,
    "referrer_spam": None,  # a referrer on the spam list or the site's blocked referrers
    "flood": None,  # over --ingest-flood-batches-per-minute from one address, with --ingest-drop-floods
    "excluded_address": None,  # the site's owner excluded this client address (or range)
    "overloaded": (429, "overloaded"),
    "storage_unavailable": (503, "storage_unavailable"),
    "disk_full": (507, "insufficient_storage"),
}


class DropError(Exception):
    def __init__(
        self, reason: str, message: str = "", field: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.reason = reason
        answer = DROP_REASONS[reason]
        self.status = answer[0] if answer else 202
        self.code = code or (answer[1] if answer else "")
        self.message = message
        self.field = field


@dataclass(slots=True)
class Job:
    """One request's batch on its way through the steps."""

    body: bytes
    origin: str | None
    user_agent: str
    address: str | None = None  # the client's address: in memory only, never stored or logged
    language: str | None = None  # the Accept-Language header's primary subtag (``sources.first_language``)
    received_us: int = field(default_factory=now_us)  # epoch microseconds
    batch: Batch | None = None
    site: SiteInfo | None = None
    client: agents.Client | None = None
    submit: Submit | None = None  # the batch as the writer process takes it
    pending: Pending | None = None
    stored: bool = False
    # A no-JavaScript pixel (``ingest/pixel.py``): no Origin to check (an image request sends none),
    # and the visitor's codes are worked out on the server as for a cookieless site.
    pixel: bool = False
    # Sent with an ``events:write`` API key (``ingest/server_events.py``): the key, checked before,
    # stands in for the Origin check, and without the visitor's user agent nothing is a bot
    # (a backend's own event has no browser).
    keyed: bool = False


# A step returns None when it finished at once, or an awaitable when it has to wait (a site not in
# the cache, the commit): the hot path creates no coroutine it does not need.
Step = Callable[[Job], Awaitable[None] | None]


class Pipeline:
    def __init__(
        self,
        directory: SiteDirectory,
        writer: GroupCommitter,
        *,
        accept_headless: bool,
        disk: DiskGuard | None = None,
        spam: frozenset[str] | None = None,
        floods: FloodWatch | None = None,
    ) -> None:
        self.directory = directory
        self.spam = referrers.spam_list() if spam is None else spam  # the referrer-spam hosts
        self.floods = floods or FloodWatch(600, drop=False)
        self.writer = writer
        self.accept_headless = accept_headless
        self.disk = disk  # below --disk-refuse-free-mb new data is refused (507)
        self.dropped: Counter[str] = Counter({reason: 0 for reason in DROP_REASONS})
        self.steps: tuple[tuple[str, Step], ...] = (
            ("parse", self.parse),
            ("validate", self.validate),
            ("authorise", self.authorise),
            ("exclude", self.exclude),
            ("filter_bots", self.filter_bots),
            ("filter_spam", self.filter_spam),
            ("watch_floods", self.watch_floods),
            ("enrich", self.enrich),
            ("buffer", self.buffer),
            ("commit", self.commit),
        )

    async def run(self, job: Job) -> None:
        """Run every step; raises DropError (already counted) when one drops the batch."""
        try:
            for _, step in self.steps:
                waiting = step(job)
                if waiting is not None:
                    await waiting
        except DropError as drop:
            self.dropped[drop.reason] += 1
            raise

    def parse(self, job: Job) -> None:
        """JSON into typed structs; types, lengths and counts of PROTOCOL.md are checked here."""
        if len(job.body) > batch.MAX_BODY:
            raise DropError("body_too_large", f"The request body is larger than {batch.MAX_BODY} bytes.")
        try:
            job.batch = batch.decode(job.body)
        except BatchError as exc:
            raise _drop(exc) from None

    def validate(self, job: Job) -> None:
        """The rules types cannot say: text must be storable (no NUL), numbers must fit a float,
        autocapture's reserved events carry their props."""
        assert job.batch is not None
        try:
            batch.check_text(job.batch, job.body)
            job.batch = batch.check_numbers(job.batch)
            batch.check_reserved(job.batch)
        except BatchError as exc:
            raise _drop(exc) from None

    def authorise(self, job: Job) -> Awaitable[None] | None:
        """The key names a site; the request comes from that site's origin; collection is on."""
        assert job.batch is not None
        cached = self.directory.cached(job.batch.key)
        if cached is MISS:
            return self._authorise_loaded(job)
        self._admit(job, cached)
        return None

    async def _authorise_loaded(self, job: Job) -> None:
        assert job.batch is not None
        self._admit(job, await to_thread.run_sync(self.directory.load, job.batch.key))

    def _admit(self, job: Job, site: SiteInfo | None) -> None:
        if site is None:
            raise DropError("unknown_site", "No site has this key.")
        job.site = site
        if not (job.pixel or job.keyed) and not site.allows_origin(job.origin):
            raise DropError("origin_not_allowed", "This key only accepts events from its site's own origin.")
        if not site.collection_enabled:
            raise DropError("collection_disabled", "The site's owner has switched collection off.")

    def exclude(self, job: Job) -> None:
        """The owner's own visits: client addresses the site excludes are answered 202, not stored."""
        site = job.site
        if site is not None and site.excluded and excluded(job.address, site.excluded):
            raise DropError("excluded_address")

    def filter_bots(self, job: Job) -> None:
        if job.keyed and not job.user_agent:
            job.client = NO_BROWSER
            return
        client = agents.client_of(job.user_agent[:1000])
        job.client = client
        if client.bot or (client.headless and not self.accept_headless):
            raise DropError("bot")

    def filter_spam(self, job: Job) -> None:
        """Referrer spam: an event whose referrer's host (or a parent domain) is on the spam list
        or the site's blocked referrers drops its batch, answered 202 like a bot's."""
        assert job.batch is not None
        assert job.site is not None
        blocked = job.site.blocked_referrers
        seen = ""
        for event in job.batch.events:
            if not event.referrer or event.referrer == seen:
                continue
            seen = event.referrer
            host = referrers.host_of_referrer(seen)
            if host is not None and referrers.listed(host, self.spam, blocked):
                raise DropError("referrer_spam")

    def watch_floods(self, job: Job) -> None:
        """One address sending one site more batches a minute than the threshold: counted, and
        dropped (202) when the operator chose so."""
        assert job.site is not None
        if self.floods.over(job.site.id, job.site.domain, job.address) and self.floods.drop:
            raise DropError("flood")

    def enrich(self, job: Job) -> None:
        """What is the same for the whole batch: site, user agent fields, arrival.

        The per-event part (event times, referrer source, UTM tags, screen class) is done by
        the writer process as it turns the batch into rows (``rows.py``), off this event loop.
        """
        assert job.site is not None
        assert job.client is not None
        site, client = job.site, job.client
        cookieless = site.cookieless or job.pixel
        job.submit = Submit(
            0,
            site.id,
            host_of(site.domain),
            client.browser,
            client.os,
            client.device_type,
            job.received_us,
            job.body,
            job.address,
            cookieless,
            job.user_agent if cookieless else None,
            job.language,
        )

    def buffer(self, job: Job) -> None:
        assert job.submit is not None
        assert job.batch is not None
        if self.disk is not None and self.disk.refuses(DATABASE):
            raise DropError("disk_full", DISK_FULL_MESSAGE)
        try:
            job.pending = self.writer.enqueue(job.submit, len(job.batch.events))
        except QueueFullError:
            raise DropError("overloaded", "The server is busy; send this batch again shortly.") from None
        except WriterDownError:
            raise DropError(
                "storage_unavailable", "The events cannot be stored right now; send them again."
            ) from None

    async def commit(self, job: Job) -> None:
        assert job.pending is not None
        try:
            job.stored = await self.writer.committed(job.pending)
        except StorageUnavailableError:
            raise DropError(
                "storage_unavailable", "The events could not be stored; send them again."
            ) from None

    async def site(self, key: str) -> SiteInfo | None:
        cached = self.directory.cached(key)
        if cached is not MISS:
            return cached
        return await to_thread.run_sync(self.directory.load, key)

    async def origin_known(self, origin: str | None) -> bool:
        """Whether ``origin`` belongs to any site (CORS for answers given before the site is known)."""
        if origin is None:
            return False
        known = self.directory.origin_cached(origin)
        if known is None:
            known = await to_thread.run_sync(self.directory.load_origin, origin)
        return known


def _drop(exc: BatchError) -> DropError:
    reason = "malformed_json" if exc.code == "malformed_json" else "invalid"
    return DropError(reason, exc.message, exc.field, code=exc.code)
