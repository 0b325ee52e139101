"""Databases as earlier releases left them: the schema at each release's migration heads, with rows.

A release is the set of migration heads main had (``git log -- src/sightline/database/migrations``);
each one's schema is made by the migrations themselves, up to those heads only. ``fill`` puts
rows in every table, whatever its columns, from the reflected schema (foreign keys point at the
parent's row), so a table a later release adds is covered without editing this file.
``scripts/make_release_fixtures.py`` keeps one SQLite file per release in
``tests/database/releases/``; the PostgreSQL tests build the same databases at test time.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from alembic import command
from sqlalchemy import (
    JSON,
    Boolean,
    Connection,
    Date,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    create_engine,
    select,
)

from sightline.database.engines import Database

# (name, migration heads), oldest first. 455378f's "0006" (report_visit_hits) was reverted within
# minutes and never released; the revision id was reused by 0006_reports_drop_event_name_index.
RELEASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("r01-console", ("0001",)),
    ("r02-surveys", ("0003",)),
    ("r03-ingest", ("0002", "0003")),
    ("r04-recordings", ("0002", "0003", "0004")),
    ("r05-reports", ("0002", "0003", "0004", "0005")),
    ("r06-reports-index", ("0002", "0003", "0004", "0006")),
    ("r07-geo", ("0003", "0004", "0006", "0013")),
    ("r08-deleted-sites", ("0003", "0004", "0006", "0010_console", "0013")),
    ("r09-one-store", ("0003", "0004", "0007", "0010_console", "0013")),
    ("r10-privacy", ("0003", "0004", "0007", "0010_console", "0013b")),
)
MOMENT = datetime(2026, 11, 20, 12, 30, 15, 123000, tzinfo=UTC)
ROWS = 2  # per table
SPECIAL: dict[tuple[str, str], Any] = {("store_tasks", "kind"): "prune_before"}


def migrate_to(db: Database, heads: tuple[str, ...]) -> None:
    """The schema exactly as a release with these heads made it."""
    with db.engine.begin() as conn:
        cfg = db.alembic_config()
        cfg.attributes["connection"] = conn
        for head in heads:
            command.upgrade(cfg, head)


def _value(table: Table, column: Any, row: int) -> Any:
    special = SPECIAL.get((table.name, column.name))
    if special is not None:
        return special
    for key in column.foreign_keys:  # the parent row's value
        return _value(key.column.table, key.column, row)
    kind = column.type
    if isinstance(kind, Boolean):
        return row % 2 == 0
    if isinstance(kind, Integer):
        return row
    if isinstance(kind, Float | Numeric):
        return 0.25 * row
    if isinstance(kind, DateTime):
        return MOMENT.replace(second=row)
    if isinstance(kind, Date):
        return date(2026, 11, row)
    if isinstance(kind, LargeBinary):
        length = kind.length or 32
        return bytes([row]) * length
    if isinstance(kind, JSON):
        return {"row": row, "table": table.name}
    if isinstance(kind, String | Text):
        length = getattr(kind, "length", None) or 200
        return f"{row}-{table.name}.{column.name}"[:length]
    raise TypeError(f"no sample value for {table.name}.{column.name} ({kind!r})")


def fill(conn: Connection) -> None:
    """``ROWS`` rows in every table but Alembic's; a foreign key refers to the parent row of the
    same number."""
    meta = MetaData()
    meta.reflect(conn)
    for table in meta.sorted_tables:
        if table.name == "alembic_version":
            continue
        rows = [
            {column.name: _value(table, column, row) for column in table.columns}
            for row in range(1, ROWS + 1)
        ]
        conn.execute(table.insert(), rows)


def snapshot(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, by table, in primary-key order (values as Python objects)."""
    engine = create_engine(url)
    try:
        meta = MetaData()
        with engine.connect() as conn:
            meta.reflect(conn)
            found: dict[str, list[dict[str, Any]]] = {}
            for table in meta.sorted_tables:
                if table.name == "alembic_version":
                    continue
                order = list(table.primary_key.columns) or list(table.columns)
                found[table.name] = [dict(r._mapping) for r in conn.execute(select(table).order_by(*order))]
        return found
    finally:
        engine.dispose()


def make_release(url: str, heads: tuple[str, ...]) -> None:
    db = Database(url)
    try:
        migrate_to(db, heads)
        with db.begin() as conn:
            fill(conn)
    finally:
        db.dispose()
