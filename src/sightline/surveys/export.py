"""CSV export of one batch of one revision's responses, streamed row by row.

Columns: ``response_id,submitted_at,revision,visitor_id,page_path`` then one per question of the
revision, in order, headed by its title. Rows are ordered by ``response_id`` (the server's
sequence, so new responses only ever append and batches never shift), at most ``BATCH`` from
``offset``. Planning reads the batch's ids from the ``(survey_id, revision, id)`` index alone;
streaming then reads the rows through a server-side cursor in small chunks.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection, RowMapping, func, select

from sightline.database import Database
from sightline.database.tables.surveys import survey_responses
from sightline.errors import ApiError
from sightline.numbers import ascii_int
from sightline.spreadsheet import safe_cell
from sightline.surveys.service import get_survey, load_definition, published_revisions

BATCH = 1000
MAX_OFFSET = 100_000
CHUNK = 200
FIXED_COLUMNS = ("response_id", "submitted_at", "revision", "visitor_id", "page_path")


def parse_offset(raw: str | None) -> int:
    if raw is None:
        return 0
    value = ascii_int(raw, 0, MAX_OFFSET)
    if value is None:
        raise ApiError(
            422, "invalid_offset", f"The offset is a whole number from 0 to {MAX_OFFSET}.", field="offset"
        )
    return value


def parse_revision(raw: str | None) -> int | None:
    if raw is None:
        return None
    value = ascii_int(raw, 1, 999_999_999)
    if value is None:
        raise ApiError(422, "invalid_revision", "The revision is a whole number from 1.", field="revision")
    return value


def escape_cell(value: str) -> str:
    """Keep spreadsheets from running a cell as a formula (``sightline.spreadsheet``)."""
    return safe_cell(value)


@dataclass(frozen=True)
class ExportPlan:
    survey_id: int
    revision: int
    offset: int
    questions: Sequence[Mapping[str, Any]]
    first_id: int | None
    last_id: int | None
    rows: int

    @property
    def full(self) -> bool:
        return self.rows == BATCH

    @property
    def next_offset(self) -> int | None:
        """The offset of the next batch, when this one is full and the next is allowed."""
        following = self.offset + BATCH
        return following if self.full and following <= MAX_OFFSET else None

    @property
    def filename(self) -> str:
        return f"survey-{self.survey_id}-revision-{self.revision}-offset-{self.offset}.csv"


def default_revision(conn: Connection, survey: RowMapping) -> int:
    latest = conn.execute(
        select(func.max(survey_responses.c.revision)).where(survey_responses.c.survey_id == survey["id"])
    ).scalar_one()
    if latest is None:
        latest = survey["published_revision"]
    if latest is None:
        raise ApiError(404, "unknown_revision", "This survey has no published revision to export yet.")
    return int(latest)


def plan_export(
    conn: Connection, owner_id: int, survey_id: int, revision: int | None, offset: int
) -> ExportPlan:
    """Check the request and find the batch; 404 for an unknown survey or revision."""
    survey = get_survey(conn, owner_id, survey_id)
    if revision is None:
        revision = default_revision(conn, survey)
    elif revision not in {row["revision"] for row in published_revisions(conn, survey_id)}:
        raise ApiError(404, "unknown_revision", "This survey has no published revision with that number.")
    ids = list(
        conn.execute(
            select(survey_responses.c.id)
            .where(survey_responses.c.survey_id == survey_id, survey_responses.c.revision == revision)
            .order_by(survey_responses.c.id)
            .offset(offset)
            .limit(BATCH)
        ).scalars()
    )
    return ExportPlan(
        survey_id=survey_id,
        revision=revision,
        offset=offset,
        questions=load_definition(conn, survey_id, revision)["questions"],
        first_id=ids[0] if ids else None,
        last_id=ids[-1] if ids else None,
        rows=len(ids),
    )


def header_row(questions: Sequence[Mapping[str, Any]]) -> list[str]:
    return [*FIXED_COLUMNS, *(str(q["title"]) for q in questions)]


def answer_cell(question: Mapping[str, Any], value: Any) -> str:
    if value is None:
        return ""
    kind = question["type"]
    if kind in {"single_choice", "multiple_choice"}:
        labels = {option["id"]: option["label"] for option in question["options"]}
        chosen = value if isinstance(value, list) else [value]
        return "; ".join(str(labels.get(option, option)) for option in chosen)
    return str(value)


def response_row(questions: Sequence[Mapping[str, Any]], row: Any) -> list[str]:
    answers = orjson.loads(row.answers)
    submitted = row.submitted_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    fixed = [str(row.id), submitted, str(row.revision), row.visitor_id, row.page_path]
    return fixed + [answer_cell(q, answers.get(q["id"])) for q in questions]


def stream_csv(db: Database, plan: ExportPlan) -> Iterator[bytes]:
    """The CSV bytes of the batch in chunks; at most ``CHUNK`` rows are in memory at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def flush() -> bytes:
        data = buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate()
        return data

    writer.writerow([escape_cell(cell) for cell in header_row(plan.questions)])
    if plan.first_id is None or plan.last_id is None:
        yield flush()
        return
    query = (
        select(
            survey_responses.c.id,
            survey_responses.c.revision,
            survey_responses.c.visitor_id,
            survey_responses.c.page_path,
            survey_responses.c.answers,
            survey_responses.c.submitted_at,
        )
        .where(
            survey_responses.c.survey_id == plan.survey_id,
            survey_responses.c.revision == plan.revision,
            survey_responses.c.id.between(plan.first_id, plan.last_id),
        )
        .order_by(survey_responses.c.id)
        .limit(BATCH)
    )
    with db.read() as conn:
        result = conn.execution_options(yield_per=CHUNK).execute(query)
        for partition in result.partitions():
            for row in partition:
                writer.writerow([escape_cell(cell) for cell in response_row(plan.questions, row)])
            yield flush()
    tail = flush()
    if tail:
        yield tail
