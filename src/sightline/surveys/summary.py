"""A summary of one revision's responses, question by question, for the console.

Ratings give a count per scale value and the average; choices a count per option (in the
question's option order); text questions their latest answers. The pass is bounded: it reads at
most ``LIMIT`` of the revision's newest responses, newest first, through a server-side cursor
``CHUNK`` rows at a time, so memory stays flat whatever the number of responses. ``responses`` is
the revision's exact count; ``summarized`` says how many the figures cover.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from sqlalchemy import Connection, func, select

from sightline.database.tables.surveys import survey_responses
from sightline.errors import ApiError
from sightline.surveys.export import default_revision
from sightline.surveys.service import get_survey, load_definition, published_revisions

LIMIT = 100_000
CHUNK = 500
LATEST_TEXTS = 10


def _iso(value: Any) -> str:
    return str(value.isoformat(timespec="milliseconds").replace("+00:00", "Z"))


class _Tally:
    """The running figures of one question."""

    def __init__(self, question: Mapping[str, Any]) -> None:
        self.question = question
        self.kind = str(question["type"])
        self.answered = 0
        self.counts: dict[Any, int] = {}
        self.total = 0
        self.texts: list[dict[str, Any]] = []
        if self.kind == "rating":
            low, high = (0, 10) if question.get("scale") == "0-10" else (1, 5)
            self.counts = dict.fromkeys(range(low, high + 1), 0)
        elif self.kind in {"single_choice", "multiple_choice"}:
            self.counts = {option["id"]: 0 for option in question["options"]}

    def add(self, value: Any, response_id: int) -> None:
        """Count one answer (the caller skips unanswered ones)."""
        self.answered += 1
        if self.kind == "rating":
            if isinstance(value, int) and value in self.counts:
                self.counts[value] += 1
                self.total += value
        elif self.kind in {"single_choice", "multiple_choice"}:
            for option in value if isinstance(value, list) else [value]:
                if option in self.counts:
                    self.counts[option] += 1
        elif len(self.texts) < LATEST_TEXTS:
            # Rows come newest first, so the first texts seen are the latest.
            self.texts.append({"response_id": response_id, "text": str(value)})

    def result(self) -> dict[str, Any]:
        base = {
            "id": self.question["id"],
            "type": self.kind,
            "title": self.question["title"],
            "answered": self.answered,
        }
        if self.kind == "rating":
            rated = sum(self.counts.values())
            return {
                **base,
                "scale": self.question.get("scale", "1-5"),
                "distribution": [{"value": v, "count": n} for v, n in self.counts.items()],
                "average": round(self.total / rated, 2) if rated else None,
            }
        if self.kind in {"single_choice", "multiple_choice"}:
            return {
                **base,
                "options": [
                    {"id": option["id"], "label": option["label"], "count": self.counts[option["id"]]}
                    for option in self.question["options"]
                ],
            }
        return {**base, "latest": self.texts}


def _times(conn: Connection, ids: set[int]) -> dict[int, str]:
    """The receive times of a few responses (the first, the last, the listed texts)."""
    if not ids:
        return {}
    query = select(survey_responses.c.id, survey_responses.c.submitted_at).where(
        survey_responses.c.id.in_(sorted(ids))
    )
    return {int(rid): _iso(at) for rid, at in conn.execute(query)}


def summarize(conn: Connection, owner_id: int, survey_id: int, revision: int | None) -> dict[str, Any]:
    """The summary of ``revision`` (default: as the export's) of one of the owner's surveys;
    404 for an unknown survey or a revision that was never published."""
    survey = get_survey(conn, owner_id, survey_id)
    if revision is None:
        revision = default_revision(conn, survey)
    elif revision not in {row["revision"] for row in published_revisions(conn, survey_id)}:
        raise ApiError(404, "unknown_revision", "This survey has no published revision with that number.")
    questions = load_definition(conn, survey_id, revision)["questions"]
    scope = (survey_responses.c.survey_id == survey_id, survey_responses.c.revision == revision)
    total = conn.execute(select(func.count()).select_from(survey_responses).where(*scope)).scalar_one()
    tallies = [(str(question["id"]), _Tally(question)) for question in questions]
    summarized = 0
    first = last = None
    query = (
        select(survey_responses.c.id, survey_responses.c.answers)
        .where(*scope)
        .order_by(survey_responses.c.id.desc())
        .limit(LIMIT)
    )
    result = conn.execution_options(yield_per=CHUNK).execute(query)
    for partition in result.partitions():
        for response_id, raw in partition:
            answers = orjson.loads(raw)
            for key, tally in tallies:
                value = answers.get(key)
                if value is not None and value != "" and value != []:
                    tally.add(value, response_id)
        summarized += len(partition)
        last = last if last is not None else int(partition[0][0])
        first = int(partition[-1][0])
    wanted = {first, last} - {None}
    wanted.update(text["response_id"] for _, tally in tallies for text in tally.texts)
    times = _times(conn, {int(rid) for rid in wanted if rid is not None})
    for _, tally in tallies:
        for text in tally.texts:
            text["submitted_at"] = times.get(text["response_id"])
    return {
        "survey_id": survey_id,
        "revision": revision,
        "responses": int(total),
        "summarized": summarized,
        "first_submitted_at": None if first is None else times.get(first),
        "last_submitted_at": None if last is None else times.get(last),
        "questions": [tally.result() for _, tally in tallies],
    }
