"""Reading Umami's and Matomo's files without a server: the days of Umami's events follow the
site's time zone, Matomo's files are read in UTF-16 or as TSV as Matomo writes them, a zip of
Umami's one CSV is Umami's, and a job notes the bytes read while a file is read whole."""

from __future__ import annotations

import hashlib
import io
import time
import zipfile
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import select

from sightline.database import Database
from sightline.database.schema import imports
from sightline.imports import jobs, service, umami
from sightline.imports.formats import ImportFileError, _header, open_upload
from tests.reports.helpers import create_site

DATA = Path(__file__).parent / "data"


def totals(path: Path, name: str, zone: str = "UTC") -> dict[date, tuple[int, int, int]]:
    upload = open_upload(path, name, None, 2**30, zone)
    return {
        f.day: (f.visitors, f.visits, f.pageviews)
        for f in upload.figures(lambda _: None)
        if f.dimension == "total"
    }


def test_umamis_visits_count_on_their_day_in_the_sites_time_zone() -> None:
    events = DATA / "umami-events.csv"
    assert totals(events, events.name) == {date(2024, 3, 4): (2, 2, 3), date(2024, 3, 5): (2, 2, 3)}
    # 08:00 UTC on 5 March is still 4 March in Honolulu; 21:05 UTC on 5 March is 11:05 there.
    assert totals(events, events.name, "Pacific/Honolulu") == {
        date(2024, 3, 3): (1, 1, 2),
        date(2024, 3, 4): (2, 2, 2),
        date(2024, 3, 5): (1, 1, 2),
    }


def test_a_zip_of_umamis_one_csv_is_umamis_and_two_csvs_are_refused(tmp_path: Path) -> None:
    body = (DATA / "umami-events.csv").read_bytes()
    one, two = tmp_path / "one.zip", tmp_path / "two.zip"
    for path, names in ((one, ["events.csv"]), (two, ["events.csv", "more.csv"])):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in names:
                archive.writestr(name, body)
    assert open_upload(one, one.name, None, 2**30).kind == "umami"
    with pytest.raises(ImportFileError, match="holds 2 CSV files; Umami's events are one CSV file"):
        open_upload(two, two.name, "umami", 2**30)


def test_matomos_files_are_read_in_utf16_and_as_tsv(tmp_path: Path) -> None:
    summary = (DATA / "matomo" / "VisitsSummary.get.csv").read_bytes()
    assert summary[:2] == b"\xff\xfe", "the sample is UTF-16 with its byte order mark, as Matomo writes it"
    browsers = (DATA / "matomo" / "DevicesDetection.getBrowsers.tsv").read_text()
    path = tmp_path / "matomo.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("VisitsSummary.get.csv", summary)
        archive.writestr("Actions.get.tsv", "date\tnb_pageviews\n2024-03-04\t25\n".encode("utf-16"))
        archive.writestr("DevicesDetection.getBrowsers.tsv", browsers)
    upload = open_upload(path, path.name, None, 2**30)
    assert upload.kind == "matomo"
    found = [(f.dimension, f.value, f.visits, f.pageviews) for f in upload.figures(lambda _: None)]
    assert found == [
        ("total", "", 10, 25),
        ("total", "", 6, 0),
        ("browser", "Firefox", 5, 0),
        ("browser", "Edge", 5, 0),
    ]


def test_a_matomo_day_twice_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "matomo.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("VisitsSummary.get.csv", "date,nb_visits\n2024-03-04,1\n2024-03-04,2\n")
        archive.writestr("Actions.get.csv", "date,nb_pageviews\n")
    with pytest.raises(ImportFileError) as raised:
        list(open_upload(path, path.name, None, 2**30).figures(lambda _: None))
    assert raised.value.field == "VisitsSummary.get.csv:3:date"


def test_a_job_notes_the_bytes_read_while_umamis_events_are_read_whole(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, site_id = create_site(db, "umami-progress.example.com")
    path = tmp_path / "upload.csv"
    rows = (DATA / "umami-events.csv").read_text().splitlines()
    path.write_text("\n".join([rows[0]] + rows[1:] * 4000) + "\n")
    upload = open_upload(path, "events.csv", None, 2**30)
    with db.begin() as conn:
        made, _ = service.accept(
            conn, site_id, None, upload, hashlib.sha256(path.read_bytes()).hexdigest(), service.scan(upload)
        )
    noted: list[int] = []

    class Noting(jobs.Importer):
        def _note(self, import_id: int, read: int) -> None:
            super()._note(import_id, read)
            with self.db.read() as conn:
                noted.append(int(conn.execute(select(imports.c.read_bytes)).scalar_one()))
            time.sleep(0.01)

    monkeypatch.setattr(jobs, "PROGRESS_EVERY", 0.0)
    path.rename(service.upload_path(tmp_path, made["id"]))
    Noting(db, tmp_path, 2**30).run(made["id"])
    assert len(noted) > 3
    assert noted == sorted(noted)
    assert 0 < noted[0] < noted[-1] <= made["size_bytes"]
    with db.read() as conn:
        assert conn.execute(select(imports.c.status)).scalar_one() == "done"


def test_telling_umamis_file_by_its_header_reads_no_more_than_64_kib() -> None:
    stream = io.BytesIO(b"session_id,visit_id,event_type\n" + b"x" * (1 << 20))
    assert _header(stream) == ["session_id", "visit_id", "event_type"]
    assert stream.tell() == 1 << 16


def test_an_umami_file_of_more_visits_than_one_import_holds_is_refused_naming_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(umami, "MAX_VISITS", 2)
    events = DATA / "umami-events.csv"
    with pytest.raises(ImportFileError, match="more than 2 visits") as raised:
        list(open_upload(events, events.name, None, 2**30).figures(lambda _: None))
    assert raised.value.field == "umami-events.csv:6:visit_id"
