"""Helpers of the import tests: Plausible export zips built in the test, uploads, waiting."""

from __future__ import annotations

import csv
import io
import time
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

import httpx


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def plausible_zip(files: dict[str, str]) -> bytes:
    """A zip as Plausible's export makes it: one CSV per table (the same files, the same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), text)
    return buffer.getvalue()


def upload(
    client: httpx.Client, site_id: int, name: str, body: bytes, content_type: str | None = None
) -> httpx.Response:
    kind = content_type or ("application/zip" if name.endswith(".zip") else "text/csv")
    return client.post(
        f"/api/sites/{site_id}/imports",
        params={"filename": name},
        content=body,
        headers={"Content-Type": kind},
    )


def wait_finished(client: httpx.Client, import_id: int, timeout: float = 60) -> dict[str, Any]:
    """The import once its job ended (done or failed)."""
    deadline = time.monotonic() + timeout
    found: dict[str, Any] = {}
    while time.monotonic() < deadline:
        response = client.get(f"/api/imports/{import_id}")
        assert response.status_code == 200, response.text
        found = response.json()
        if found["status"] in ("done", "failed"):
            return found
        time.sleep(0.1)
    raise AssertionError(f"import {import_id} did not finish: {found}")


def imported(client: httpx.Client, site_id: int, name: str, body: bytes) -> dict[str, Any]:
    response = upload(client, site_id, name, body)
    assert response.status_code == 202, response.text
    done = wait_finished(client, int(response.json()["id"]))
    assert done["status"] == "done", done
    return done
