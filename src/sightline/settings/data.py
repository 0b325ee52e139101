"""Where data goes and how long it stays: checks, disk, recordings, ingest, the event log and the
analytics store."""

from __future__ import annotations

from sightline.settings import values as v
from sightline.settings.setting import BACKUP, ERASE, REBUILD, RESTORE, SERVE, Setting

DATA: tuple[Setting, ...] = (
    Setting(
        "check_timeout_seconds",
        "integer",
        5,
        "Time limit of one site connection check.",
        v.positive_int,
    ),
    Setting(
        "check_min_interval_seconds",
        "integer",
        10,
        "Minimum time between two connection checks of one site.",
        v.positive_int,
    ),
    Setting(
        "disk_warn_free_mb",
        "integer",
        2048,
        "Below this many MiB free on the data directory's (or SQLite database's) file system, "
        "health's disk service warns and names what uses the space.",
        v.positive_int,
    ),
    Setting(
        "disk_refuse_free_mb",
        "integer",
        256,
        "Below this many MiB free, new events, recording chunks and survey answers are refused "
        "with 507 (the SDK sends them again later) instead of filling the disk; taken again by "
        "itself once there is room.",
        v.positive_int,
    ),
    Setting(
        "recording_retention_days",
        "integer",
        30,
        "Recordings older than this many days are deleted.",
        v.positive_int,
    ),
    Setting(
        "recordings_url",
        "url",
        None,
        "Where recording chunks are stored: empty for DATA_DIR/recordings (the default); "
        "file:///path for a directory, which several nodes may share (NFS, CephFS, ...); or "
        "s3://BUCKET/PREFIX?endpoint=https://HOST:PORT&region=NAME for an S3-compatible object "
        "store (Amazon S3 without endpoint; addressing=path or virtual overrides the style), with "
        "credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or the "
        "machine's role), never in the URL. Every node of several must name the same storage.",
        v.recordings_url,
        (SERVE, BACKUP, RESTORE, ERASE),
    ),
    Setting(
        "recording_max_mb",
        "integer",
        50,
        "Largest size of one session recording, in MiB of compressed chunks; the SDK stops "
        "recording a visit that reaches it.",
        v.positive_int,
    ),
    Setting(
        "ingest_queue_events",
        "integer",
        20000,
        "Events that may wait for the database at once; beyond it ingest answers 429 with Retry-After "
        "(the SDK sends them again later).",
        v.positive_int,
    ),
    Setting(
        "ingest_accept_headless",
        "boolean",
        False,
        "Store events from headless browsers (automated tests of your own site); by default they are "
        "dropped as bots.",
        v.boolean,
    ),
    Setting(
        "ingest_flood_batches_per_minute",
        "integer",
        600,
        "More batches than this in one minute from one client address to one site are a flood: "
        "counted and shown in health with the sites they hit (a person sends a few a minute).",
        v.positive_int,
    ),
    Setting(
        "ingest_drop_floods",
        "boolean",
        False,
        "Drop flood batches (see --ingest-flood-batches-per-minute): answered 202, not stored.",
        v.boolean,
    ),
    Setting(
        "referrer_spam_list",
        "path",
        None,
        "A file of referrer-spam hosts, one a line (the community list's spammers.txt), used "
        "instead of the copy built into the package; a batch whose referrer's host or a parent "
        "domain of it is listed is answered 202 and not stored.",
        v.readable_file,
    ),
    Setting(
        "sdk_dir",
        "path",
        None,
        "Directory /analytics.js and /analytics-NAME.js are served from. Default: the SDK built "
        "into the package (src/sightline/web/static/sdk).",
        str,
    ),
    Setting(
        "event_retention_days",
        "integer",
        None,
        "Delete events (the log and the analytics store) and survey responses older than this many "
        "days, for every site that sets no retention of its own. Default: keep them.",
        v.positive_int,
    ),
    Setting(
        "geoip_database",
        "path",
        None,
        "A MaxMind-format database (.mmdb: GeoLite2 City, DB-IP City Lite, ...) for the region and "
        "city of each event. Countries work without it (from the bundled registry data).",
        str,
    ),
    Setting(
        "events_url",
        "url",
        None,
        "Where the analytics store lives: empty for DuckDB in DATA_DIR/store.duckdb (the default), "
        "or clickhouse://USER:PASSWORD@HOST:8123/DATABASE for a ClickHouse server or cluster "
        "(its HTTP interface). The SQL database keeps the durable log the store is fed from.",
        v.events_url,
        (SERVE, REBUILD),
    ),
    Setting(
        "event_log_retention_days",
        "integer",
        None,
        "Days the durable event log (the SQL events table) keeps an event after it reached the "
        "analytics store. Default: forever, so the store can always be rebuilt from the log "
        "(sightline rebuild-store); with a limit, older events live only in the store.",
        v.positive_int,
    ),
    Setting(
        "store_memory_mb",
        "integer",
        1024,
        "Memory the embedded analytics store (DuckDB) may use for its queries and cache, in MiB; "
        "larger queries spill to disk under DATA_DIR.",
        v.positive_int,
        (SERVE, REBUILD),
    ),
    Setting(
        "store_feed_seconds",
        "number",
        0.5,
        "How often the store process looks for new events in the log when it has caught up; "
        "while events are waiting it feeds them without pause, in batches of 20000 events (122880 while "
        "a backlog of more waits).",
        v.positive_float,
    ),
    Setting(
        "store_niceness",
        "integer",
        10,
        "The store process's CPU priority below the server's (a nice value, 0-19): while ingest "
        "keeps the cores busy, feeding the store and answering reports wait for it, so events "
        "are acknowledged without delay and reports lag instead. 0: the same priority as ingest.",
        v.niceness,
    ),
    Setting(
        "reports_exact_below",
        "integer",
        500000,
        "Reports on the embedded store count a span's unique visitors exactly below this many of its "
        "events or visits, and on a bitmap (within 0.3 %) from it on, where they also keep past days' "
        "figures between requests (docs/reports.md). Lower it only to test those paths on a small store.",
        v.positive_int,
    ),
    Setting(
        "reports_kept_mb",
        "integer",
        None,
        "Memory the server may use for report figures kept between requests, in MiB (an estimate of "
        "their size; the least recently used go first). Default: an eighth of the memory the server "
        "may use (the machine's, or its container's limit), from 128 to 1,024 MiB. The overview of "
        "every site over 30 days keeps 8 bytes per visitor of each day and of each period: at 100 M "
        "events in all about 700 MiB; with less, each request reads again what the last one pushed out.",
        v.positive_int,
        (SERVE,),
    ),
)
