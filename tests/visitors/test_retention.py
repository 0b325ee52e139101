"""Retention: events and survey responses older than each site's days go, in batches, with a store
task; sites without retention keep everything; both engines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, insert, select, update

from sightline.accounts.users import create_user
from sightline.database import Database
from sightline.database.schema import events, sites, store_tasks, survey_responses
from sightline.sites.service import create_site
from sightline.surveys.service import create_survey, publish_survey
from sightline.visitors import retention
from sightline.visitors.retention import Retention
from tests.surveys.helpers import survey_body

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _site(db: Database, domain: str, days: int | None) -> tuple[int, int]:
    with db.begin() as conn:
        user = create_user(conn, f"owner-{domain}@example.com", "a long enough password")
        site_id = int(create_site(conn, user["id"], "Shop", domain)["id"])
        conn.execute(update(sites).where(sites.c.id == site_id).values(retention_days=days))
        survey = create_survey(conn, user["id"], survey_body(site_id))
        publish_survey(conn, user["id"], survey["id"])
        for age in (1, 40):
            at = NOW - timedelta(days=age)
            conn.execute(
                insert(events),
                [
                    {
                        "site_id": site_id,
                        "time": at - timedelta(seconds=i),
                        "visitor_id": f"v{i}",
                        "session_id": "s",
                        "name": "pageview",
                        "path": "/",
                        "batch_id": f"b{age}-{i}",
                    }
                    for i in range(7)
                ],
            )
            conn.execute(
                insert(survey_responses).values(
                    survey_id=survey["id"],
                    revision=1,
                    client_id=f"c{age}",
                    visitor_id="v",
                    page_path="/app/",
                    answers="{}",
                    submitted_at=at,
                )
            )
    return user["id"], site_id


def _count(db: Database, table: object, *where: object) -> int:
    with db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(table).where(*where)).scalar_one())  # type: ignore[arg-type]


def test_old_events_and_responses_go_in_batches_per_site_and_the_store_is_told(
    db: Database, monkeypatch: object
) -> None:
    retention.BATCH = 3  # several batches for 7 old events
    try:
        _, limited = _site(db, "limited.example", 30)
        _, default = _site(db, "default.example", None)
        job = Retention(db, None, clock=lambda: NOW)
        report = job.run()
    finally:
        retention.BATCH = 5000
    assert (report.events_removed, report.responses_removed, report.sites) == (7, 1, 1)
    assert _count(db, events, events.c.site_id == limited) == 7
    assert _count(db, events, events.c.site_id == default) == 14
    with db.read() as conn:
        task = conn.execute(select(store_tasks).where(store_tasks.c.site_id == limited)).one()
    assert task.kind == "prune_before"
    assert (
        task.before.replace(tzinfo=UTC)
        if task.before.tzinfo is None
        else task.before == NOW - timedelta(days=30)
    )
    # A second run moves the pending task forward instead of adding one.
    Retention(db, None, clock=lambda: NOW + timedelta(hours=1)).run()
    assert _count(db, store_tasks, store_tasks.c.site_id == limited) == 1
    health = job.probe()
    assert health.status == "ok"
    assert health.figures["last_events_removed"] == 7


def test_the_global_setting_applies_to_sites_without_their_own(db: Database) -> None:
    _, default = _site(db, "global.example", None)
    report = Retention(db, 10, clock=lambda: NOW).run()
    assert report.events_removed == 7
    assert _count(db, events, events.c.site_id == default) == 7
    assert _count(db, survey_responses) == 1


def test_a_failing_run_makes_health_degraded_since_its_first_failure_until_a_run_succeeds(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [NOW]
    job = Retention(db, 10, clock=lambda: now[0])

    def unreachable() -> list[tuple[int, int]]:
        raise OSError("the database is unreachable")

    monkeypatch.setattr(job, "policies", unreachable)
    for hours in (0, 1):
        now[0] = NOW + timedelta(hours=hours)
        assert not job.periodic.run_once()
    health = job.probe()
    assert health.status == "degraded"
    assert health.figures["failing_since"] == NOW.isoformat()
    assert job.last is not None
    assert job.last.error == "OSError"
    monkeypatch.undo()
    assert job.periodic.run_once()
    health = job.probe()
    assert (health.status, health.figures["failing_since"]) == ("ok", None)
