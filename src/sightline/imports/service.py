"""Imports of a site: accepting an upload, listing, showing and deleting them.

An upload is checked whole before it is accepted (every row of every file, streamed: 422 naming
the file, line and column), so a queued import fails only when the server does. It is idempotent:
the same file (by SHA-256) for the same site gives back the import it made (``duplicate``), and a
file whose days overlap another import of the site is refused (409 ``import_overlaps``) rather
than counted twice. Only imports whose status is ``done`` count in reports. The duplicate and
overlap checks and the new row are one atomic step: ``database.lock_row`` on the site's row makes
concurrent acceptances for one site wait for each other (SQLite: the write lock from the first
statement; PostgreSQL: the row lock). A deleted import is marked ``deleting`` (gone from the API
and the reports at once) and its figures leave in bounded steps (``jobs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, insert, select, update

from sightline.database import lock_row
from sightline.database.schema import imports, sites
from sightline.database.types import utcnow
from sightline.errors import ApiError
from sightline.imports.formats import Upload

QUEUED, RUNNING, DONE, FAILED, DELETING = "queued", "running", "done", "failed", "deleting"
LIVE = (QUEUED, RUNNING, DONE)


@dataclass(frozen=True)
class Scanned:
    """What a check of every row found: the days covered and the lines read."""

    first_day: date | None
    last_day: date | None
    lines: int


def scan(upload: Upload) -> Scanned:
    """Reads every row once (raising ``ImportFileError`` at the first bad one)."""
    first: date | None = None
    last: date | None = None
    lines = 0
    for figure in upload.figures(lambda _: None):
        lines += 1
        first = figure.day if first is None or figure.day < first else first
        last = figure.day if last is None or figure.day > last else last
    return Scanned(first, last, lines)


def shape(row: Any) -> dict[str, Any]:
    size = int(row["size_bytes"]) or 1
    done = row["status"] == DONE
    return {
        "id": row["id"],
        "site_id": row["site_id"],
        "kind": row["kind"],
        "filename": row["filename"],
        "checksum": row["checksum"],
        "status": row["status"],
        "progress": 1.0 if done else round(min(1.0, int(row["read_bytes"]) / size), 3),
        "rows": row["rows"],
        "size_bytes": row["size_bytes"],
        "from": row["first_day"].isoformat() if row["first_day"] else None,
        "to": row["last_day"].isoformat() if row["last_day"] else None,
        "tables": list(row["tables"]),
        "error": row["error"],
        "created_at": row["created_at"].isoformat(),
        "finished_at": row["finished_at"].isoformat() if row["finished_at"] else None,
    }


def accept(
    conn: Connection,
    site_id: int,
    user_id: int | None,
    upload: Upload,
    checksum: str,
    scanned: Scanned,
) -> tuple[dict[str, Any], bool]:
    """The import row for an upload: (its shape, True) when new, (the earlier one, False) when
    the same file was imported into the site before."""
    lock_row(conn, sites.c.name, site_id)
    same = conn.execute(
        select(imports).where(
            imports.c.site_id == site_id, imports.c.checksum == checksum, imports.c.status.in_(LIVE)
        )
    ).first()
    if same is not None:
        return shape(same._mapping), False
    if scanned.first_day is None or scanned.last_day is None:
        raise ApiError(422, "invalid_import", f"{upload.name} holds no figures.", field="file")
    overlap = conn.execute(
        select(imports).where(
            imports.c.site_id == site_id,
            imports.c.status.in_(LIVE),
            imports.c.first_day <= scanned.last_day,
            imports.c.last_day >= scanned.first_day,
        )
    ).first()
    if overlap is not None:
        raise ApiError(
            409,
            "import_overlaps",
            f"Import {overlap.id} ({overlap.filename}) already covers "
            f"{overlap.first_day.isoformat()} to {overlap.last_day.isoformat()}, which overlaps this file's "
            f"{scanned.first_day.isoformat()} to {scanned.last_day.isoformat()}. Delete that import first "
            "if this file replaces it.",
            field="file",
        )
    values = {
        "site_id": site_id,
        "kind": upload.kind,
        "filename": upload.name[:255],
        "checksum": checksum,
        "status": QUEUED,
        "size_bytes": upload.size,
        "read_bytes": 0,
        "rows": 0,
        "first_day": scanned.first_day,
        "last_day": scanned.last_day,
        "tables": [name.rsplit("/", 1)[-1] for name in upload.tables],
        "error": None,
        "created_by": user_id,
        "created_at": utcnow(),
        "finished_at": None,
    }
    new_id = conn.execute(insert(imports).values(**values).returning(imports.c.id)).scalar_one()
    return shape({**values, "id": new_id}), True


def list_imports(conn: Connection, site_id: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        select(imports)
        .where(imports.c.site_id == site_id, imports.c.status != DELETING)
        .order_by(imports.c.id.desc())
    )
    return [shape(row._mapping) for row in rows]


def get_import(conn: Connection, import_id: int, site_ids: Any) -> dict[str, Any]:
    """The import, if it belongs to one of ``site_ids`` (a subquery of the team's sites)."""
    row = conn.execute(
        select(imports).where(
            imports.c.id == import_id, imports.c.site_id.in_(site_ids), imports.c.status != DELETING
        )
    ).first()
    if row is None:
        raise ApiError(404, "not_found", "No import with that id exists.")
    return shape(row._mapping)


def delete_import(conn: Connection, import_id: int) -> None:
    """Marks the import deleted: reports and the API leave it out at once, a running job stops at
    its next batch, and ``jobs.Importer.delete`` removes its figures in bounded steps."""
    conn.execute(update(imports).where(imports.c.id == import_id).values(status=DELETING))


def upload_path(directory: Path, import_id: int) -> Path:
    return directory / f"{import_id}.upload"


def unfinished(conn: Connection) -> list[int]:
    """Imports a server stopped before finishing (queued or running)."""
    rows = conn.execute(select(imports.c.id).where(imports.c.status.in_((QUEUED, RUNNING))))
    return [int(r) for r in rows.scalars()]


def being_deleted(conn: Connection) -> list[int]:
    """Imports deleted whose figures a stopped server had not removed yet."""
    rows = conn.execute(select(imports.c.id).where(imports.c.status == DELETING))
    return [int(r) for r in rows.scalars()]
