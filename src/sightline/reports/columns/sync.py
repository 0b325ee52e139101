"""Copies what the rollup job has folded into the column store, one batch per DuckDB transaction.

A batch is the events after the store's watermark, up to the rollup job's watermark, and the
current ``report_visits`` row of every visit they belong to (replacing the copy's older row).
Events are appended; the watermark moves in the same DuckDB transaction, so a batch is copied
exactly once even when the process dies halfway. Reading up to the rollup's watermark, never
past it, keeps every copied event's visit in ``report_visits``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import BigInteger, Connection, Integer, cast, extract, func, select

from sightline.reports.columns.store import BUILDING, READY, ColumnStore
from sightline.reports.rollup import JOB, PAGEVIEW, VISIT_DIMS, cut, props_of
from sightline.storage import Database
from sightline.storage.schema import events, report_state, report_visits

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
CHUNK = 5000  # sessions per IN list when reading their visits


def micros(moment: datetime) -> int:
    """Microseconds since the epoch, exactly (no float on the way)."""
    return (moment - EPOCH) // MICROSECOND


def micros_of(column: Any, dialect: str) -> Any:
    """Microseconds since the epoch of a UTC timestamp column, computed exactly by the database."""
    if dialect == "sqlite":  # stored as text: 'YYYY-MM-DD HH:MM:SS.ffffff'
        return cast(func.strftime("%s", column), Integer) * 1_000_000 + cast(
            func.substr(column, 21, 6), Integer
        )
    return cast(extract("epoch", column) * 1_000_000, BigInteger)


def sync(db: Database, store: ColumnStore, batch: int) -> int:
    """Copies the next batch; returns how many events it copied (0: the store has caught up)."""
    if store.state not in (BUILDING, READY):
        return 0
    with db.read() as conn:
        target = conn.execute(select(report_state.c.last_event_id).where(report_state.c.name == JOB)).scalar()
        target = int(target or 0)
        if target <= store.watermark:
            store.state = READY
            return 0
        e = events.c
        rows = conn.execute(
            select(
                e.id,
                e.site_id,
                micros_of(e.time, db.dialect),
                e.visitor_id,
                e.session_id,
                e.name,
                e.path,
                e.props,
            )
            .where(e.id > store.watermark, e.id <= target)
            .order_by(e.id)
            .limit(batch)
        ).all()
        visits = _visits(conn, db.dialect, {(r[1], r[4]) for r in rows})
    newest = int(rows[-1][0]) if len(rows) == batch else target
    _write(store, rows, visits, newest)
    if newest >= target:
        store.state = READY
    return len(rows)


def _visits(conn: Connection, dialect: str, keys: Iterable[tuple[int, str]]) -> list[Sequence[Any]]:
    v = report_visits.c
    by_site: dict[int, list[str]] = {}
    for site_id, session_id in keys:
        by_site.setdefault(site_id, []).append(session_id)
    out: list[Sequence[Any]] = []
    for site_id, sessions in by_site.items():
        for i in range(0, len(sessions), CHUNK):
            query = select(
                v.site_id,
                v.session_id,
                v.visitor_id,
                micros_of(v.started_at, dialect),
                v.pageviews,
                v.duration,
                v.entry_path,
                v.exit_path,
                *(getattr(v, dim) for dim in VISIT_DIMS),
            ).where(v.site_id == site_id, v.session_id.in_(sessions[i : i + CHUNK]))
            out.extend(conn.execute(query).all())
    return out


def _columns(rows: Sequence[Sequence[Any]], names: Sequence[str]) -> dict[str, np.ndarray]:
    """Rows as a dict of numpy columns (the form DuckDB scans without a copy per row)."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    return {name: np.array(values, dtype=object) for name, values in zip(names, columns, strict=True)}


TERM = f"CAST(CASE WHEN name = '{PAGEVIEW}' THEN path ELSE name END AS VARCHAR)"

# Numbers for the batch's new page paths and custom event names.
NEW_TERMS = f"""
INSERT INTO terms
SELECT (SELECT coalesce(max(id), 0) FROM terms) + row_number() OVER (ORDER BY text), text
FROM (SELECT DISTINCT {TERM} AS text FROM new_hits) AS batch
WHERE NOT EXISTS (SELECT 1 FROM terms WHERE terms.text = batch.text)
"""  # noqa: S608 (fixed names and constants only)

# Numbers for the batch's new visitors.
NEW_VISITORS = """
INSERT INTO visitors
SELECT vk, (SELECT coalesce(max(vid), 0) FROM visitors) + row_number() OVER (ORDER BY vk)
FROM (SELECT DISTINCT hash(CAST(visitor AS VARCHAR)) AS vk FROM new_visits) AS batch
WHERE NOT EXISTS (SELECT 1 FROM visitors WHERE visitors.vk = batch.vk)
"""

# The touched visits' rows as report_visits holds them now, with their pages and events lists:
# the lists already copied (old row) plus this batch's events, summed per page and per event.
MERGED = f"""
CREATE OR REPLACE TEMP TABLE merged AS
WITH touched AS (
    SELECT CAST(site_id AS INTEGER) AS site_id, hash(CAST(session AS VARCHAR)) AS sk,
           hash(CAST(visitor AS VARCHAR)) AS vk, CAST(started AS BIGINT) AS started,
           CAST(pageviews AS INTEGER) AS pageviews, CAST(duration AS INTEGER) AS duration,
           CAST(entry AS VARCHAR) AS entry, CAST(exit AS VARCHAR) AS exit,
           {", ".join(f"CAST({dim} AS VARCHAR) AS {dim}" for dim in VISIT_DIMS)}
    FROM new_visits
),
old AS (SELECT v.* FROM visits v SEMI JOIN touched t ON v.site_id = t.site_id AND v.sk = t.sk),
counts AS (
    SELECT site_id, sk, pageview, value, sum(n) AS n FROM (
        SELECT site_id, sk, true AS pageview, unnest(pages) AS value, unnest(page_views) AS n FROM old
        UNION ALL
        SELECT site_id, sk, false, unnest(events), unnest(event_counts) FROM old
        UNION ALL
        SELECT CAST(site_id AS INTEGER), hash(CAST(session AS VARCHAR)), name = '{PAGEVIEW}', terms.id, 1
        FROM new_hits JOIN terms ON terms.text = {TERM}
    ) GROUP BY ALL
),
lists AS (
    SELECT site_id, sk,
           list(value ORDER BY value) FILTER (WHERE pageview) AS pages,
           list(CAST(n AS INTEGER) ORDER BY value) FILTER (WHERE pageview) AS page_views,
           list(value ORDER BY value) FILTER (WHERE NOT pageview) AS events,
           list(CAST(n AS INTEGER) ORDER BY value) FILTER (WHERE NOT pageview) AS event_counts
    FROM counts GROUP BY site_id, sk
)
SELECT t.*, coalesce(l.pages, []), coalesce(l.page_views, []),
       coalesce(l.events, []), coalesce(l.event_counts, []), visitors.vid
FROM touched t LEFT JOIN lists l ON l.site_id = t.site_id AND l.sk = t.sk
JOIN visitors ON visitors.vk = t.vk
"""  # noqa: S608 (fixed names and constants only)


def _write(store: ColumnStore, rows: Sequence[Any], visits: list[Sequence[Any]], newest: int) -> None:
    hits = [(r[1], int(r[2]), r[3], r[4], r[5], r[6]) for r in rows]
    props = [
        (site_id, int(t), visitor, session, name, cut(f"{name}\x1f{key}\x1f{text}"))
        for _, site_id, t, visitor, session, name, _, raw in rows
        if raw and name != PAGEVIEW
        for key, text in props_of(raw)
    ]
    with store.writer() as cur:
        cur.register("new_hits", _columns(hits, ("site_id", "t", "visitor", "session", "name", "path")))
        if hits:
            cur.execute(
                "INSERT INTO hits SELECT CAST(site_id AS INTEGER), CAST(t AS BIGINT), "
                "hash(CAST(visitor AS VARCHAR)), hash(CAST(session AS VARCHAR)), "
                "CAST(name AS VARCHAR), CAST(path AS VARCHAR) FROM new_hits"
            )
        if props:
            cur.register(
                "new_props", _columns(props, ("site_id", "t", "visitor", "session", "name", "value"))
            )
            cur.execute(
                "INSERT INTO props SELECT CAST(site_id AS INTEGER), CAST(t AS BIGINT), "
                "hash(CAST(visitor AS VARCHAR)), hash(CAST(session AS VARCHAR)), "
                "CAST(name AS VARCHAR), CAST(value AS VARCHAR) FROM new_props"
            )
            cur.unregister("new_props")
        if visits:
            columns = ("site_id", "session", "visitor", "started", "pageviews", "duration", "entry", "exit")
            cur.register("new_visits", _columns(visits, columns + VISIT_DIMS))
            cur.execute(NEW_TERMS)
            cur.execute(NEW_VISITORS)
            cur.execute(MERGED)
            cur.execute(
                "DELETE FROM visits USING merged m WHERE visits.site_id = m.site_id AND visits.sk = m.sk"
            )
            cur.execute("INSERT INTO visits SELECT * FROM merged")
            cur.execute("DROP TABLE merged")
            cur.unregister("new_visits")
        cur.unregister("new_hits")
        cur.execute("UPDATE meta SET watermark = ? WHERE id = 1", [newest])
    store.watermark = newest
