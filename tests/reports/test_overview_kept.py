"""The overview's kept figures (``reports.overview_days``) are the figures of what is stored: after
a late event into an ended day, a visit in the hour going on, an erasure, a site's deletion and a
time-zone change, the overview as served (its days kept between requests) equals the overview of
a server that kept nothing and the independent count over the events the log acknowledged, on
both engines."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sightline.database import open_database
from sightline.reports import overview_days, warm
from sightline.reports.overview import overview
from sightline.reports.overview_pieces import Keys, Piece, Span, read
from sightline.reports.period import period_of
from sightline.reports.warm import Warmer
from sightline.sites import service as sites_service
from sightline.store.changes import Changes
from sightline.store.engines import Embedded
from sightline.store.kept_files import KeysFile
from tests.conftest import database_url_for
from tests.reports.kept_world import InProcessStore, SiteModel, World, open_engine

ENGINES = ["duckdb", "clickhouse"]
RANGES = ["realtime", "today", "7d", "30d"]


@pytest.fixture(params=ENGINES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    db = open_database(database_url_for(request, "sqlite", tmp_path), migrate=False)
    url = (
        request.getfixturevalue("clickhouse").url(f"t_{uuid.uuid4().hex[:12]}")
        if request.param == "clickhouse"
        else None
    )
    made = World(db, open_engine(request.param, tmp_path, url), "sqlite", 7, 500_000, 400)
    # The server keeps the overview's pieces on both engines (both record their changes).
    made.served = InProcessStore(made.engine, made.dialect, keeps=True)
    assert overview_days.ledger_of(made.served) is not None
    yield made
    made.close()
    db.dispose()


def _rows(w: World, site_ids: list[int]) -> list[dict[str, Any]]:
    with w.db.read() as conn:
        listed = {int(row["id"]): dict(row) for row in sites_service.list_sites(conn, w.owner)}
    # a deleted site is still asked for (as a server that listed it a moment before would)
    created = (datetime.now(UTC) - timedelta(days=60)).isoformat()
    gone = {"name": "gone", "domain": "gone.example", "timezone": "UTC", "created_at": created}
    return [listed.get(site_id, {"id": site_id, **gone}) for site_id in site_ids]


def _oracle(w: World, site_ids: list[int], name: str, now: datetime) -> dict[int, tuple[int, int, int]]:
    """Each site's visitors, pageviews and previous period's visitors, counted from the events."""
    out = {}
    for row in _rows(w, site_ids):
        model = next((s for s in w.sites if s.id == row["id"]), None)
        events = model.events() if model is not None else []
        period = period_of(name, None, None, ZoneInfo(row["timezone"]), now)
        before = period.previous()
        inside = [e for e in events if period.start <= e.time < period.end]
        earlier = [e for e in events if before.start <= e.time < before.end]
        out[int(row["id"])] = (
            len({e.visitor_id for e in inside}),
            sum(e.name == "pageview" for e in inside),
            len({e.visitor_id for e in earlier}),
        )
    return out


def _check(w: World, site_ids: list[int]) -> None:
    """Served twice (the second from kept days), cold and counted: all the same."""
    w.settle()
    for name in RANGES:
        now = datetime.now(UTC)
        rows = _rows(w, site_ids)
        served = [overview(w.served, rows, name, None, None, now, wanted=False) for _ in range(2)]
        cold = overview(w.cold(), rows, name, None, None, now, wanted=False)
        assert served[0] == served[1] == cold, (name, w.history)
        shown = {s["site_id"]: (s["visitors"], s["pageviews"], s["previous_visitors"]) for s in cold["sites"]}
        assert shown == _oracle(w, site_ids, name, now), (name, w.history)
        for site in cold["sites"]:
            assert sum(point["visitors"] for point in site["series"]) >= site["visitors"]


def _late_visit(w: World, site: SiteModel, days_ago: int) -> None:
    """A visit into a day that ended: the store records the hours it touched."""
    start = datetime.now(UTC) - timedelta(days=days_ago, hours=1)
    w.ingest(site, w.visit(site, start, start + timedelta(hours=1)))
    w.said(f"site {site.id}: a visit {days_ago} days ago")


def _started(w: World) -> tuple[SiteModel, SiteModel, list[int]]:
    first, second = w.add_site(), w.add_site()
    for site in (first, second):
        w.ingest(site, w.history_of(site, 60, 40))
    _check(w, [first.id, second.id])
    ledger = overview_days.ledger_of(w.served)
    assert ledger is not None
    assert len(ledger.kept)  # the days were kept
    return first, second, [first.id, second.id]


def test_a_late_event_into_an_ended_day_is_counted_by_the_kept_overview(world: World) -> None:
    first, _, ids = _started(world)
    for days_ago in (2, 9, 35):
        _late_visit(world, first, days_ago)
        _check(world, ids)


def test_an_erased_visitor_leaves_the_kept_overview(world: World) -> None:
    first, second, ids = _started(world)
    world.erase(first, first.rows[0].event.visitor_id)
    world.said(f"site {first.id}: a visitor erased")
    _check(world, ids)
    world.erase(second, second.rows[-1].event.visitor_id)
    _check(world, ids)


def test_a_deleted_site_has_no_figures_left_in_the_kept_overview(world: World) -> None:
    first, _, ids = _started(world)
    world.delete_site(first)
    _check(world, ids)


def test_a_changed_time_zone_counts_the_sites_new_days(world: World) -> None:
    first, second, ids = _started(world)
    world.change_zone(first)
    world.change_zone(second)
    _check(world, ids)  # the new zone's days, kept
    _late_visit(world, second, 3)
    _check(world, ids)


def test_a_visit_in_the_hour_going_on_is_counted_by_every_request(world: World) -> None:
    first, second, ids = _started(world)  # every ended day and hour kept
    now = datetime.now(UTC)
    hour = now.replace(minute=0, second=0, microsecond=0)
    for site in (first, second):
        world.ingest(site, world.visit(site, hour + (now - hour) / 2, now))
    world.said("a visit in the hour going on")
    _check(world, ids)


def _two_sites(w: World) -> tuple[SiteModel, SiteModel]:
    first, second = w.add_site(), w.add_site()
    for site in (first, second):
        w.ingest(site, w.history_of(site, 40, 40))
    w.settle()
    return first, second


def _reads(w: World, monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """From now on, each read of pieces the served store answers: the times (µs) it is bound to."""
    reads: list[list[int]] = []
    columns = w.served.columns

    def seen(sql: str, values: dict[str, Any]) -> dict[str, Any]:
        reads.append([v for v in values.values() if isinstance(v, int) and v > 10**15])
        return columns(sql, values)

    monkeypatch.setattr(w.served, "columns", seen)
    return reads


def _earliest(reads: list[list[int]]) -> int:
    times = [at for read in reads for at in read]
    assert times
    return min(times)


def test_a_first_request_over_more_events_than_one_read_holds_reads_them_in_parts(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, big = world.add_site(), world.add_site()
    world.ingest(small, world.history_of(small, 20, 40))
    world.ingest(big, world.history_of(big, 80, 40))
    ledger = overview_days.ledger_of(world.served)
    assert ledger is not None
    ledger.read_most = len(big.events()) // 3  # the big site's 60 days in three runs at least
    world.said(f"at most {ledger.read_most} events a read")
    world.settle()
    reads = _reads(world, monkeypatch)
    rows = _rows(world, [small.id, big.id])
    overview(world.served, rows, "30d", None, None, datetime.now(UTC), wanted=False)
    assert len(reads) >= 4  # every day of both sites, in parts: the big site's alone in three
    _check(world, [small.id, big.id])  # and the figures are those of the events
    _late_visit(world, big, 3)
    _late_visit(world, small, 35)
    _check(world, [small.id, big.id])


def _the_days_last_hour() -> datetime:
    """Now, or later today in its last hour (UTC, the sites' zone), when a period that reaches
    now ends at the next midnight and today is a whole day."""
    now = datetime.now(UTC)
    return now if now.hour == 23 else now.replace(hour=23, minute=30)


@pytest.mark.parametrize("clock", [lambda: datetime.now(UTC), _the_days_last_hour], ids=["now", "last hour"])
def test_the_days_read_at_the_start_leave_the_first_request_only_the_hour_going_on(
    world: World, monkeypatch: pytest.MonkeyPatch, clock: Callable[[], datetime]
) -> None:
    first, second = _two_sites(world)
    held = len(first.events()) + len(second.events())
    now = clock()
    assert not Warmer(world.served, world.db, lambda _: True, held + 1).warm(now)
    ledger = overview_days.ledger_of(world.served)
    assert ledger is not None
    assert not len(ledger.kept)  # a small store: nothing read at the start
    assert Warmer(world.served, world.db, lambda _: True, held).warm(now)
    reads = _reads(world, monkeypatch)
    for name in ("7d", "30d"):
        overview(world.served, _rows(world, [first.id, second.id]), name, None, None, now, wanted=False)
    hour = int(now.replace(minute=0, second=0, microsecond=0).timestamp() * 1_000_000)
    assert _earliest(reads) >= hour  # the hour going on, and nothing before it
    _check(world, [first.id, second.id])


def test_a_range_whose_days_would_not_fit_the_kept_room_is_left_to_its_first_request(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_sites(world)
    ledger = overview_days.ledger_of(world.served)
    assert ledger is not None
    monkeypatch.setattr(warm, "RANGES", ("7d",))
    assert Warmer(world.served, world.db, lambda _: True, 0).warm(datetime.now(UTC))
    ledger.kept.most_bytes = 2 * ledger.kept.used  # 7 days fit; 30 days, three times the events, not
    monkeypatch.setattr(warm, "RANGES", ("7d", "30d"))
    reads = _reads(world, monkeypatch)
    assert Warmer(world.served, world.db, lambda _: True, 0).warm(datetime.now(UTC))
    fortnight = int((datetime.now(UTC) - timedelta(days=15)).timestamp() * 1_000_000)
    assert _earliest(reads) > fortnight  # 7 days and the 7 before them: nothing of 30 days' read


def test_the_start_read_goes_in_parts_and_lets_requests_asking_the_store_go_first_between_them(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _two_sites(world)
    monkeypatch.setattr(warm, "PART_EVENTS", len(first.events()) // 3)
    monkeypatch.setattr(warm, "GIVE_WAY", 5.0)
    looks: list[bool] = []
    answers = iter([True, True, True])  # a request asks the store during the first three looks

    def busy() -> bool:
        looks.append(next(answers, False))
        return looks[-1]

    assert Warmer(world.served, world.db, lambda _: True, 0, busy).warm(datetime.now(UTC))
    assert looks[:4] == [True, True, True, False]  # between two parts it waited for the request
    _check(world, [first.id, second.id])


DAY = 86_400_000_000  # µs
HOUR = 3_600_000_000


def _covered(reads: list[list[int]]) -> int:
    """The time the reads of pieces covered, in all (each read binds its spans' ends in pairs)."""
    return sum(high - low for read in reads for low, high in zip(read[::2], read[1::2], strict=True))


def _restarted(w: World, monkeypatch: pytest.MonkeyPatch) -> tuple[InProcessStore, list[list[int]]]:
    """The store as a server that started again sees it (nothing kept in its memory), and the
    times each read of its pieces is bound to from now on."""
    again = InProcessStore(w.engine, w.dialect, keeps=True)
    w.served = again
    return again, _reads(w, monkeypatch)


def _unions(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """From now on, for each union of whole days the overview asks for, whether it was kept."""
    found: list[bool] = []
    union_of = overview_days.Ledger.union_of

    def seen(ledger: overview_days.Ledger, site_id: int, spans: list[Span], have: Any, kept: Any) -> Keys:
        if len(spans) > 1 and all(high - low >= 23 * HOUR for low, high in spans):
            found.append(
                ledger.kept.get((site_id, spans[0][0], spans[-1][1], overview_days.UNION), kept) is not None
            )
        return union_of(ledger, site_id, spans, have, kept)

    monkeypatch.setattr(overview_days.Ledger, "union_of", seen)
    return found


def test_a_restarted_server_reads_the_ended_days_the_store_keeps_in_its_file_instead_of_their_events(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _two_sites(world)
    ids = [first.id, second.id]
    _check(world, ids)  # every ended day of 30 days and the 30 before them read, and handed to the store
    again, reads = _restarted(world, monkeypatch)
    united = _unions(monkeypatch)
    files: list[str] = []
    read_file = KeysFile.read

    def counted(keys: KeysFile) -> Keys | None:
        files.append(keys.path)
        return read_file(keys)

    monkeypatch.setattr(KeysFile, "read", counted)
    overview(again, _rows(world, ids), "30d", None, None, datetime.now(UTC), wanted=False)
    assert len(united) == 4  # each site's whole days of 30 days, and of the 30 before
    if world.engine.name == "duckdb":  # the hours of today and of the comparison's cut day only
        assert _covered(reads) <= 2 * DAY
        assert all(united)  # the days' unions too: read from the file, not made again
        assert len(files) == 4  # and of the files, the unions' only: a day's keys, when a union asks
    else:  # ClickHouse keeps no days in a file: every day read again
        assert _covered(reads) >= 58 * DAY
        assert not any(united)
    _check(world, ids)
    # A late visit three days ago: its day leaves the file with the write, and is read again.
    _late_visit(world, first, 3)
    world.settle()
    again, reads = _restarted(world, monkeypatch)
    overview(again, _rows(world, ids), "30d", None, None, datetime.now(UTC), wanted=False)
    if world.engine.name == "duckdb":
        assert DAY <= _covered(reads) <= 3 * DAY  # that day, and the hours
    _check(world, ids)


def test_days_read_before_a_write_or_a_restart_of_the_store_process_are_not_kept_in_its_file(
    world: World,
) -> None:
    first, second = _two_sites(world)
    store = world.served
    ledger = overview_days.ledger_of(store)
    assert ledger is not None
    seen = ledger.kept.sync(first.id)
    period = period_of("7d", None, None, ZoneInfo("UTC"), datetime.now(UTC))
    day = overview_days.plan(period, True).spans[0]
    piece = read(store.columns, store.dialect, {day: [first.id, second.id]})
    rows = [
        (
            site.id,
            seen.number,
            *day,
            piece[(site.id, day)].pageviews,
            piece[(site.id, day)].visitors,
        )
        for site in (first, second)
    ]
    keep_days = getattr(store, "keep_days", None)
    if keep_days is None:  # ClickHouse: the server hands it none
        assert world.engine.name == "clickhouse"
        return
    late = datetime.fromtimestamp(day[0] / 1e6, UTC) + timedelta(hours=2)
    world.ingest(first, world.visit(first, late, late + timedelta(minutes=5)))  # a change after the read
    world.settle()
    assert keep_days(seen.epoch, rows) == 1  # the second site's only
    assert [row[0] for row in store.kept_days([(first.id, *day), (second.id, *day)])] == [second.id]
    world.engine.changes = Changes(world.engine.watermark())  # the store process started again
    assert keep_days(seen.epoch, rows) == 0


def test_a_kept_day_whose_file_went_before_its_keys_were_read_reads_them_from_the_events(
    world: World, tmp_path: Path
) -> None:
    first, _ = _two_sites(world)
    period = period_of("7d", None, None, ZoneInfo("UTC"), datetime.now(UTC))
    day = overview_days.plan(period, True).spans[0]
    store = world.served
    expected = read(store.columns, store.dialect, {day: [first.id]})[(first.id, day)]
    assert expected.count  # a day with visitors
    gone = KeysFile(str(tmp_path / "no such file.keys"), expected.count)
    piece = Piece(None, expected.pageviews, gone.count, overview_days._loaded(store, first.id, day, gone))
    assert piece.visitors.tolist() == expected.visitors.tolist()


def test_a_union_whose_file_was_damaged_is_made_again_from_its_days_and_the_figures_hold(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _two_sites(world)
    ids = [first.id, second.id]
    _check(world, ids)
    if not isinstance(world.engine, Embedded):  # ClickHouse: no file
        return
    files = world.engine.days.files
    for low, high, name in world.engine.query("SELECT low, high, keys FROM kept_days", {}):
        if int(high) - int(low) > DAY + 2 * HOUR:  # a period's whole days together
            (files / str(name)).write_bytes(b"\0" * 16)
    again, _ = _restarted(world, monkeypatch)
    united = _unions(monkeypatch)
    overview(again, _rows(world, ids), "30d", None, None, datetime.now(UTC), wanted=False)
    assert united == [False] * 4  # not taken from the damaged files: made from the days
    _check(world, ids)
