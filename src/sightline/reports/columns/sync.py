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


def _write(store: ColumnStore, rows: Sequence[Any], visits: list[Sequence[Any]], newest: int) -> None:
    hits = [(r[1], int(r[2]), r[3], r[4], r[5], r[6]) for r in rows]
    props = [
        (site_id, int(t), visitor, session, name, cut(f"{name}\x1f{key}\x1f{text}"))
        for _, site_id, t, visitor, session, name, _, raw in rows
        if raw and name != PAGEVIEW
        for key, text in props_of(raw)
    ]
    with store.writer() as cur:
        if hits:
            cur.register("new_hits", _columns(hits, ("site_id", "t", "visitor", "session", "name", "path")))
            cur.execute(
                "INSERT INTO hits SELECT CAST(site_id AS INTEGER), CAST(t AS BIGINT), "
                "hash(CAST(visitor AS VARCHAR)), hash(CAST(session AS VARCHAR)), "
                "CAST(name AS VARCHAR), CAST(path AS VARCHAR) FROM new_hits"
            )
            cur.unregister("new_hits")
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
            names = ("site_id", "session", "visitor", "started", "pageviews", "duration", "entry", "exit")
            cur.register("new_visits", _columns(visits, names + VISIT_DIMS))
            cur.execute(
                "DELETE FROM visits USING new_visits n "
                "WHERE visits.site_id = CAST(n.site_id AS INTEGER) "
                "AND visits.sk = hash(CAST(n.session AS VARCHAR))"
            )
            text = ", ".join(f"CAST({dim} AS VARCHAR)" for dim in VISIT_DIMS)
            cur.execute(
                "INSERT INTO visits SELECT CAST(site_id AS INTEGER), hash(CAST(session AS VARCHAR)), "  # noqa: S608 (fixed names)
                "hash(CAST(visitor AS VARCHAR)), CAST(started AS BIGINT), CAST(pageviews AS INTEGER), "
                "CAST(duration AS INTEGER), CAST(entry AS VARCHAR), CAST(exit AS VARCHAR), "
                f"{text} FROM new_visits"
            )
            cur.unregister("new_visits")
        cur.execute("UPDATE meta SET watermark = ? WHERE id = 1", [newest])
    store.watermark = newest
