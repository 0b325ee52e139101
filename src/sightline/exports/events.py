"""A period's raw events of one site as CSV, streamed from the durable log (the SQL ``events``
table) through a server-side cursor: rows are read and written a chunk at a time, in time order
(the ``(site_id, time)`` index), so memory does not grow with the period."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import datetime

from sqlalchemy import select

from sightline import dimensions
from sightline.database import Database
from sightline.database.schema import events
from sightline.spreadsheet import safe_cell

CHUNK = 2000
# (header, the log's column) of each column, in order: the registry's, so that a dimension the log
# keeps is a column here (``dimensions.export_columns``).
COLUMNS = dimensions.export_columns()
HEADER = tuple(header for header, _ in COLUMNS)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return safe_cell(str(value))


def stream_events(db: Database, site_id: int, start: datetime, end: datetime) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def flush() -> bytes:
        data = buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate()
        return data

    writer.writerow(HEADER)
    yield flush()
    query = (
        select(*(events.c[column] for _, column in COLUMNS))
        .where(events.c.site_id == site_id, events.c.time >= start, events.c.time < end)
        .order_by(events.c.time, events.c.id)
    )
    with db.read() as conn:
        result = conn.execution_options(yield_per=CHUNK).execute(query)
        for partition in result.partitions():
            for row in partition:
                writer.writerow([_cell(value) for value in row])
            yield flush()
