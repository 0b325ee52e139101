"""Generates a large analytics store directly (no log): ``events`` and ``visits`` in DuckDB SQL.

For the scale benchmark (``bench/bench_scale.py``): ``events`` events over the last ``days``
days across ``sites`` sites, the first of which gets a fifth of the visits (the largest site),
the others the rest evenly. Visits have 1 to 5 events (3 on average) 45 s apart, returning
visitors, 40 sources, a few UTM campaigns, 12 browser/OS/device mixes, 16 countries, 400 pages
with a long tail, 15 % custom events with props. Each site numbers its visits in the order they
start, as the feed numbers them in the order it meets them (``store/feed.py``). Rows are written
one day of visit starts at a time, sorted by site and time, as the store process leaves them once
it has put a settled span in site order (``store/ordering.py``), and ``ordered_until`` says so:
the store needs no ``settle`` (a store of the earlier layout, in time order, still does).

The generated events' ids start at ``FIRST_ID``, far past any id the log gives: the log holds
none of these events, so they must stay out of the self-check's way (``store/check.py`` compares
each site's days of events up to the watermark with the log's, and repairs a day that differs)
and never share an id with an event the log gives and the feed writes. A store generated with
ids from 0 is moved there by ``move_ids`` before a run.
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from bench.reports_data import AGENTS, CAMPAIGNS, COUNTRIES, CUSTOM, SOURCES
from sightline import channels
from sightline.store.engines import FILE_NAME, ORDERED, Embedded
from sightline.store.ordering import HOUR, Ordering

DAY = 86_400_000_000
FIRST_ID = 1 << 60  # generated ids start here: the log's ids and the watermark never get there
GAP = 45_000_000  # microseconds between two events of a visit


def generate(
    con: duckdb.DuckDBPyConnection, events: int, sites: list[int], end: int, days: int = 30
) -> float:
    """Writes the rows; returns the seconds it took."""
    started = time.perf_counter()
    visits = events // 3
    params = {
        "visits": visits,
        "big": sites[0],
        "others": sites[1:],
        "end": end,
        "span": days * DAY,
        "sources": [s or "(none)" for s in SOURCES],
        "campaigns": [list(c) for c in CAMPAIGNS],
        "agents": [list(a) for a in AGENTS],
        "countries": COUNTRIES,
    }
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE gen_visits AS
        SELECT v,
          CASE WHEN v % 5 = 0 THEN $big
               ELSE list_extract($others, (1 + hash(v, 'site') % len($others))::INTEGER) END AS site_id,
          $end - $span + (hash(v, 'start') % $span)::BIGINT AS start,
          hash(v // 3, 'visitor') AS visitor,
          hash(v, 'visit') AS session,
          (1 + hash(v, 'n') % 5)::INTEGER AS n,
          list_extract($sources, (1 + hash(v, 'src') % len($sources))::INTEGER) AS source,
          CASE WHEN hash(v, 'utm') % 10 = 0
               THEN list_extract($campaigns, (1 + hash(v, 'c') % len($campaigns))::INTEGER)
               ELSE ['', '', ''] END AS utm,
          list_extract($agents, (1 + hash(v, 'a') % len($agents))::INTEGER) AS agent,
          list_extract($countries, (1 + hash(v, 'co') % len($countries))::INTEGER) AS country
        FROM range($visits) t(v)
        """,
        params,
    )
    con.execute(  # each visit's channel, as the feed writes it (sightline.channels)
        f"CREATE OR REPLACE TEMP TABLE gen_visits AS SELECT * EXCLUDE (utm_source, utm_medium), "
        f"{channels.SQL} AS channel FROM (SELECT *, utm[1] AS utm_source, utm[2] AS utm_medium "
        "FROM gen_visits)"
    )

    first = end - days * DAY
    for day in range(days):
        low, high = first + day * DAY, first + (day + 1) * DAY
        con.execute(  # the day's visits numbered on from each site's count, in the order they start
            "CREATE OR REPLACE TEMP TABLE day_visits AS SELECT g.*, (coalesce(c.visits, 0) + "
            "row_number() OVER (PARTITION BY g.site_id ORDER BY g.start, g.v))::UINTEGER AS visit "
            "FROM gen_visits AS g LEFT JOIN visit_counts AS c ON c.site_id = g.site_id "
            "WHERE g.start >= $low AND g.start < $high",
            {"low": low, "high": high},
        )
        con.execute(
            """
            INSERT INTO events BY NAME
            SELECT site_id, start + i * $gap AS time, $first + v * 8 + i AS id, visitor, visit,
              CASE WHEN i > 0 AND hash(v, i, 'custom') % 100 < 15
                   THEN list_extract($custom, (1 + hash(v, i, 'name') % len($custom))::INTEGER)
                   ELSE 'pageview' END AS name,
              '/p/'
                || least(hash(v, i, 'p1') % 400, hash(v, i, 'p2') % 400, hash(v, i, 'p3') % 400)::VARCHAR
                AS path,
              CASE WHEN i > 0 AND hash(v, i, 'custom') % 100 < 15
                   THEN ['plan' || chr(31)
                         || (CASE WHEN hash(v, i, 'plan') % 2 = 0 THEN 'free' ELSE 'pro' END)]
                   ELSE []::VARCHAR[] END AS props,
              start AS visit_start, source, channel, utm[1] AS utm_source, utm[2] AS utm_medium,
              utm[3] AS utm_campaign, agent[1] AS browser, agent[2] AS os, agent[3] AS device, country
            FROM (SELECT *, unnest(range(n)) AS i FROM day_visits)
            ORDER BY site_id, time
            """,
            {"gap": GAP, "custom": CUSTOM, "first": FIRST_ID},
        )
        con.execute(
            """
            INSERT INTO visits BY NAME
            SELECT site_id, visit, hash(site_id, visit, 'session') AS session, any_value(visitor) AS visitor,
              min(time) AS born, min(time) AS start, max(time) AS last,
              count(*) FILTER (WHERE name = 'pageview') AS pageviews,
              count(*) FILTER (WHERE name != 'pageview') AS events,
              arg_min(path, time) FILTER (WHERE name = 'pageview') AS entry,
              min(time) FILTER (WHERE name = 'pageview') AS entry_at,
              arg_max(path, time) FILTER (WHERE name = 'pageview') AS exit,
              max(time) FILTER (WHERE name = 'pageview') AS exit_at,
              any_value(source) AS source, any_value(channel) AS channel,
              any_value(utm_source) AS utm_source, any_value(utm_medium) AS utm_medium,
              any_value(utm_campaign) AS utm_campaign, any_value(browser) AS browser, any_value(os) AS os,
              any_value(device) AS device, any_value(country) AS country, max(id) AS version
            FROM events WHERE visit_start >= $low AND visit_start < $high
            GROUP BY site_id, visit
            ORDER BY site_id, min(time)
            """,
            {"low": low, "high": high},
        )
        con.execute(
            "INSERT INTO visit_counts SELECT site_id, max(visit) FROM day_visits GROUP BY site_id "
            "ON CONFLICT (site_id) DO UPDATE SET visits = excluded.visits"
        )
        print(f"  day {day + 1}/{days} written ({time.perf_counter() - started:.0f} s)", flush=True)
    con.execute("DROP TABLE gen_visits")
    con.execute("DROP TABLE day_visits")
    con.execute(  # every span written is in site order: nothing for the store process to rewrite
        "INSERT INTO store_state VALUES ($name, $value) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        {"name": ORDERED, "value": end // HOUR * HOUR},
    )
    con.execute("CHECKPOINT")
    return time.perf_counter() - started


def settle(data_dir: Path) -> None:
    """Puts every settled span of an existing embedded store in site order, as the store process
    does in the background (``store/ordering.py``), so that a benchmark measures the steady state
    and not the first minutes of a server rewriting a store it has just been given."""
    if not (data_dir / FILE_NAME).exists():
        return
    store = Embedded(data_dir, 4096)
    try:
        job, started, moved = Ordering(store), time.perf_counter(), 0
        now = time.time_ns() // 1000
        while (span := job.due(now)) is not None:
            moved += store.rewrite_in_order(*span)
        if moved:
            print(f"put {moved:,} events in site order in {time.perf_counter() - started:.0f} s", flush=True)
    finally:
        store.close()


def move_ids(data_dir: Path, made: int) -> None:
    """Moves the ids of a store generated with ids from 0 (its events before ``made``, the
    microsecond its generation ended) past ``FIRST_ID``, its visits' versions with them; the
    events fed since keep theirs. Without this the self-check finds every generated day different
    from the log (their events up to the watermark are not in it) and events fed with the ids of
    generated ones held twice, and spends its rounds on repairs that hold the feed."""
    if not (data_dir / FILE_NAME).exists():
        return
    store = Embedded(data_dir, 4096)
    try:
        con, started = store._con, time.perf_counter()
        found = con.execute(
            "SELECT count(*) FROM events WHERE id < $first AND time < $made",
            {"first": FIRST_ID, "made": made},
        ).fetchone()
        if not found or not found[0]:
            return
        con.execute("BEGIN TRANSACTION")
        for table, column, before in (("events", "id", "time"), ("visits", "version", "start")):
            con.execute(
                f"UPDATE {table} SET {column} = {column} + $first "
                f"WHERE {column} < $first AND {before} < $made",
                {"first": FIRST_ID, "made": made},
            )
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        print(
            f"moved the ids of {found[0]:,} generated events past the log's "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    finally:
        store.close()
