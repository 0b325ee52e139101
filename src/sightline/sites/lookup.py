"""What ingest needs to know about a site, fast: key lookup with a short-lived cache, origin matching.

The cache answers most requests without touching the database. It is emptied the moment any
change to the ``sites`` table commits in this process (an SQLAlchemy event listener on the
engine, so the console needs no hook), and entries live at most ``TTL_SECONDS`` so changes
made by another process show up quickly too. On PostgreSQL every server's cache is also emptied
when another server commits a change (``notify.py``: LISTEN/NOTIFY).
"""

from __future__ import annotations

import enum
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Delete, Insert, Update, event, select

from sightline.autocapture import settings as autocapture
from sightline.database import Database
from sightline.database.schema import sites
from sightline.numbers import port_number
from sightline.sites import referrers
from sightline.sites.cache_sync import NOTIFY, ChangeListener
from sightline.sites.domains import host_of
from sightline.sites.privacy import Network, networks_of

TTL_SECONDS = 5.0
MAX_ENTRIES = 50_000
# Execution option set by ingest's own writes to ``sites`` (connection state), which change
# nothing the cache holds and must not empty it.
SKIP_INVALIDATION = "sightline_keeps_site_cache"
_CHANGED = "sightline_sites_changed"
DEFAULT_PORTS = {"http": 80, "https": 443}


class Miss(enum.Enum):
    MISS = "miss"


MISS = Miss.MISS


@dataclass(frozen=True, slots=True)
class SiteInfo:
    id: int
    key: str
    domain: str
    collection_enabled: bool
    recording_enabled: bool
    recording_sample_rate: float
    cookieless: bool = False
    excluded: tuple[Network, ...] = ()  # client addresses whose events are dropped
    # Autocapture: plugin names the site's settings turn on, and its file-download extensions.
    capture: tuple[str, ...] = ()
    file_download_extensions: tuple[str, ...] = autocapture.DEFAULT_EXTENSIONS
    blocked_referrers: frozenset[str] = frozenset()  # the owner's spam hosts (sites.referrers)

    def allows_origin(self, origin: str | None) -> bool:
        return origin is not None and origin_matches(origin, self.domain)


@lru_cache(maxsize=4096)
def parse_origin(origin: str) -> tuple[str, str, int, bool] | None:
    """``(scheme, host, port, explicit_port)`` of an Origin header, or None when it is not one."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in DEFAULT_PORTS or not rest or "/" in rest or "@" in rest:
        return None
    if rest.startswith("["):
        end = rest.find("]")
        if end == -1:
            return None
        host, tail = rest[1:end], rest[end + 1 :]
    else:
        host, _, port_text = rest.partition(":")
        tail = ":" + port_text if _ else ""
    if not host:
        return None
    if not tail:
        return scheme, host, DEFAULT_PORTS[scheme], False
    port = port_number(tail[1:]) if tail.startswith(":") else None
    if port is None:
        return None
    return scheme, host, port, True


@lru_cache(maxsize=4096)
def _domain_parts(domain: str) -> tuple[str, int | None]:
    host = host_of(domain)
    tail = domain[domain.rindex("]") + 1 :] if domain.startswith("[") else domain[len(host) :]
    return host, port_number(tail[1:]) if tail.startswith(":") else None


def origin_matches(origin: str, domain: str) -> bool:
    """PROTOCOL.md's rule: host equal to the domain's or ``www.`` + it; port equal to the domain's
    port when it has one, else the scheme's default port."""
    parsed = parse_origin(origin)
    if parsed is None:
        return False
    scheme, host, port, _ = parsed
    site_host, site_port = _domain_parts(domain)
    if host != site_host and host != "www." + site_host:
        return False
    return port == (site_port if site_port is not None else DEFAULT_PORTS[scheme])


def candidate_domains(origin: str) -> list[str]:
    """Every stored domain an Origin could match (for preflights, which carry no key)."""
    parsed = parse_origin(origin)
    if parsed is None:
        return []
    scheme, host, port, _ = parsed
    hosts = [host, host[4:]] if host.startswith("www.") and len(host) > 4 else [host]
    shown = [f"[{h}]" if ":" in h else h for h in hosts]
    found = [f"{h}:{port}" for h in shown]
    if port == DEFAULT_PORTS[scheme]:
        found += shown
    return found


class SiteDirectory:
    """Sites by public key, and whether an Origin belongs to any site; cached in memory."""

    def __init__(self, db: Database, ttl: float = TTL_SECONDS) -> None:
        self.db = db
        self.ttl = ttl
        self._by_key: dict[str, tuple[float, SiteInfo | None]] = {}
        self._origins: dict[str, tuple[float, bool]] = {}
        self._generation = 0
        self._lock = threading.Lock()
        event.listen(db.engine, "after_execute", self._after_execute)
        event.listen(db.engine, "commit", self._after_commit)
        event.listen(db.engine, "rollback", self._after_rollback)
        # Several servers on one PostgreSQL: each change is announced to all (sites/cache_sync.py).
        self.listener = ChangeListener(db.url, self.clear) if db.dialect == "postgresql" else None

    def close(self) -> None:
        event.remove(self.db.engine, "after_execute", self._after_execute)
        event.remove(self.db.engine, "commit", self._after_commit)
        event.remove(self.db.engine, "rollback", self._after_rollback)
        if self.listener is not None:
            self.listener.close()

    def cached(self, key: str) -> SiteInfo | Miss | None:
        """The cached answer for ``key`` (a SiteInfo, or None for an unknown key); MISS when not cached."""
        entry = self._by_key.get(key)
        if entry is None or entry[0] < time.monotonic():
            return MISS
        return entry[1]

    def load(self, key: str) -> SiteInfo | None:
        """Read one site from the database (blocking: call it from a worker thread) and cache it."""
        generation = self._generation
        with self.db.read() as conn:
            row = conn.execute(
                select(
                    sites.c.id,
                    sites.c.key,
                    sites.c.domain,
                    sites.c.collection_enabled,
                    sites.c.recording_enabled,
                    sites.c.recording_sample_rate,
                    sites.c.cookieless,
                    sites.c.excluded_addresses,
                    sites.c.file_download_extensions,
                    sites.c.blocked_referrers,
                    *(sites.c[autocapture.column(name)] for name in autocapture.SWITCHES),
                ).where(sites.c.key == key)
            ).first()
        info = None
        if row is not None:
            info = SiteInfo(
                id=int(row.id),
                key=str(row.key),
                domain=str(row.domain),
                collection_enabled=bool(row.collection_enabled),
                recording_enabled=bool(row.recording_enabled),
                recording_sample_rate=float(row.recording_sample_rate),
                cookieless=bool(row.cookieless),
                excluded=networks_of(row.excluded_addresses),
                capture=tuple(
                    plugin
                    for name, plugin in autocapture.SWITCHES.items()
                    if row._mapping[autocapture.column(name)]
                ),
                file_download_extensions=autocapture.stored_extensions(row.file_download_extensions),
                blocked_referrers=frozenset(referrers.blocked_of(row.blocked_referrers)),
            )
        self._store(self._by_key, key, info, generation)
        return info

    def origin_cached(self, origin: str) -> bool | None:
        """Whether ``origin`` belongs to some site, from the cache; None on a miss."""
        entry = self._origins.get(origin)
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def load_origin(self, origin: str) -> bool:
        generation = self._generation
        candidates = candidate_domains(origin)
        known = False
        if candidates:
            with self.db.read() as conn:
                known = (
                    conn.execute(select(sites.c.id).where(sites.c.domain.in_(candidates))).first() is not None
                )
        self._store(self._origins, origin, known, generation)
        return known

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._by_key = {}
            self._origins = {}

    def _store(self, cache: dict[str, Any], name: str, value: Any, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return  # a change committed while we read: do not cache what may be stale
            if len(cache) >= MAX_ENTRIES:
                cache.clear()
            cache[name] = (time.monotonic() + self.ttl, value)

    def _after_execute(self, conn: Connection, clause: Any, *args: Any) -> None:
        if not isinstance(clause, Insert | Update | Delete) or clause.table is not sites:
            return
        options = args[2] if len(args) > 2 and isinstance(args[2], dict) else {}
        if options.get(SKIP_INVALIDATION) or clause.get_execution_options().get(SKIP_INVALIDATION):
            return
        if not conn.info.get(_CHANGED) and conn.dialect.name == "postgresql":
            conn.exec_driver_sql(NOTIFY)  # delivered to every server when this transaction commits
        conn.info[_CHANGED] = True
        self.clear()

    def _after_commit(self, conn: Connection) -> None:
        if conn.info.pop(_CHANGED, False):
            self.clear()

    def _after_rollback(self, conn: Connection) -> None:
        conn.info.pop(_CHANGED, None)
