"""The import job on both SQL databases: it streams the upload (the bytes read grow batch by
batch, in buffers, never the whole file), records its progress, and shows nothing until done."""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from sightline.database import Database
from sightline.database.schema import imported_figures, imports
from sightline.imports import service
from sightline.imports.formats import Figure, open_upload
from sightline.imports.jobs import Importer
from tests.imports.helpers import csv_text
from tests.reports.helpers import create_site


class Watched(Importer):
    """An importer that notes what each batch recorded and whether reports could see it yet."""

    def __init__(self, db: Database, directory: Path) -> None:
        super().__init__(db, directory, 2**30)
        self.batches: list[tuple[int, int, str]] = []

    def _flush(
        self, import_id: int, batch: list[dict[str, Any]], read: int, lines: int, *, last: bool
    ) -> None:
        with self.db.read() as conn:
            status = conn.execute(select(imports.c.status).where(imports.c.id == import_id)).scalar_one()
        self.batches.append((read, lines, status))
        super()._flush(import_id, batch, read, lines, last=last)


def test_a_long_file_is_imported_in_batches_with_growing_progress(db: Database, tmp_path: Path) -> None:
    _, site_id = create_site(db, "jobs.example.com")
    days = [date(1990, 1, 1) + timedelta(days=n) for n in range(12_000)]
    path = tmp_path / "upload.csv"
    note = "an ignored column, so that the file is larger than the read-ahead"
    path.write_text(
        csv_text(["date", "visitors", "visits", "pageviews", "note"], [[d, 2, 3, 4, note] for d in days])
    )
    upload = open_upload(path, "days.csv", None, 2**30)
    sizes: list[int] = []
    assert sum(1 for _ in upload.figures(sizes.append)) == len(days)
    assert sum(sizes) == path.stat().st_size
    assert max(sizes) <= 1 << 16, "the file was read whole instead of streamed"
    with db.begin() as conn:
        made, created = service.accept(
            conn, site_id, None, upload, hashlib.sha256(path.read_bytes()).hexdigest(), service.scan(upload)
        )
    assert created
    importer = Watched(db, tmp_path)
    path.rename(service.upload_path(tmp_path, made["id"]))
    importer.run(made["id"])
    reads = [read for read, _, _ in importer.batches]
    lines = [lines for _, lines, _ in importer.batches]
    assert len(reads) >= 3  # at most BATCH rows a step, fewer when a step held the lock long
    assert reads == sorted(reads)
    assert 0 < reads[0] < reads[-1] == upload.size
    # The last flush may carry no rows (it marks the import done) when the file ends on a step.
    steps = lines[:-1] if len(lines) > 1 and lines[-1] == lines[-2] else lines
    assert steps == sorted(set(steps))
    assert lines[-1] == 12000
    assert max(b - a for a, b in zip([0, *lines], lines, strict=False)) <= 5000
    assert {status for _, _, status in importer.batches} == {"running"}, "reports saw a partial import"
    with db.read() as conn:
        row = conn.execute(select(imports).where(imports.c.id == made["id"])).one()._mapping
        stored = conn.execute(
            select(func.count(), func.sum(imported_figures.c.visits)).where(
                imported_figures.c.import_id == made["id"]
            )
        ).one()
    assert service.shape(row)["status"] == "done"
    assert service.shape(row)["progress"] == 1.0
    assert tuple(stored) == (12_000, 36_000)
    assert not service.upload_path(tmp_path, made["id"]).exists(), "the upload was left behind"


def test_a_deleted_import_stops_its_job_and_leaves_no_rows(db: Database, tmp_path: Path) -> None:
    _, site_id = create_site(db, "stop.example.com")
    path = tmp_path / "upload.csv"
    days = [date(2000, 1, 1) + timedelta(days=n) for n in range(7000)]
    path.write_text(csv_text(["date", "visitors", "visits", "pageviews"], [[d, 1, 1, 1] for d in days]))
    upload = open_upload(path, "days.csv", "daily", 2**30)
    with db.begin() as conn:
        made, _ = service.accept(conn, site_id, None, upload, "f" * 64, service.scan(upload))
    path.rename(service.upload_path(tmp_path, made["id"]))

    class Deleting(Importer):
        def _flush(
            self, import_id: int, batch: list[dict[str, Any]], read: int, lines: int, *, last: bool
        ) -> None:
            super()._flush(import_id, batch, read, lines, last=last)
            with self.db.begin() as conn:
                service.delete_import(conn, import_id)

    importer = Deleting(db, tmp_path, 2**30)
    importer._guarded(made["id"])
    with db.read() as conn:
        assert conn.execute(select(imports.c.status)).scalar_one() == "deleting"
    importer.remove(made["id"])  # what DELETE /api/imports/{id} hands the job thread
    with db.read() as conn:
        assert conn.execute(select(func.count()).select_from(imported_figures)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(imports)).scalar_one() == 0


def test_plausibles_tables_become_the_reports_dimensions(tmp_path: Path) -> None:
    path = tmp_path / "imported_locations_20240101_20240101.csv"
    path.write_text(
        "date,country,region,city,visitors,visits,visit_duration,bounces,pageviews\n"
        "2024-01-01,de,DE-BE,2950159,3,4,100,1,9\n"
        "2024-01-01,,,0,1,1,0,1,1\n"
    )
    upload = open_upload(path, path.name, None, 2**30)
    assert upload.kind == "plausible"
    found = list(upload.figures(lambda _: None))
    day = date(2024, 1, 1)
    assert found == [
        Figure(day, "country", "DE", 3, 4, 9, 1, 100),
        Figure(day, "region", "DE-BE", 3, 4, 9, 1, 100),
        Figure(day, "country", "(none)", 1, 1, 1, 1, 0),
    ]
