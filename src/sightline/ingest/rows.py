"""A validated batch as rows of the ``events`` table: the per-event part of enrichment.

Runs in the writer process, once per event, so it is kept to cached lookups and a few
operations: the event's server time (the batch's arrival minus the event's age within the
batch, ``times.py``), the referrer and UTM columns (one cached lookup per (page, referrer)),
the screen class and the props as JSON text. What is the same for the whole batch (site, user
agent fields, arrival) the server worked out before handing the batch over; the place (country,
region, city) the writer looked up once for the batch's client address, which is not kept.
"""

from __future__ import annotations

from typing import Any

import orjson

from sightline.ingest import sources
from sightline.ingest.batch import Batch
from sightline.ingest.times import TimeParam

MAX_AGE_MS = 24 * 3600 * 1000  # an event's age within its batch is capped at one day
MAX_AGE_US = MAX_AGE_MS * 1000


def event_rows(
    batch: Batch,
    site_id: int,
    site_host: str,
    agent: tuple[str | None, str | None, str | None],
    received_us: int,
    time_param: TimeParam,
    null: Any = None,
    where: tuple[str | None, str | None, str | None] = (None, None, None),
    accepted: str | None = None,
) -> list[Any]:
    """The batch's events' column values, row after row, in ``EVENT_COLUMNS`` order.

    ``agent`` is (browser, os, device type); ``received_us`` the batch's arrival (epoch µs);
    ``null`` what stands for NULL (``store.null_for``: None, or NaN on SQLite); ``where`` the
    batch's (country, region, city); ``accepted`` the primary subtag of the request's
    ``Accept-Language``, the language of events that do not say theirs (``navigator.language``).
    """
    events, batch_id = batch.events, batch.batch_id
    now_param = time_param(received_us)
    # An event's age is measured against the moment its batch left the client (sent_at), or,
    # from clients that do not send it, against the batch's newest event.
    newest = batch.sent_at
    if newest is None:
        newest = max((e.ts for e in events if e.ts is not None), default=None)
    place, place_with_utm = sources.place, sources.place_with_utm
    screen_class, dumps, language = sources.screen_class, orjson.dumps, sources.language
    tail = tuple(null if v is None else v for v in agent)
    last = (batch_id, *(null if v is None else v for v in where))  # batch_id, country, region, city
    values: list[Any] = []  # grown with += (in place, no call per piece)
    for event in events:
        ts = event.ts
        if newest is None or ts is None or ts >= newest:
            when = now_param
        else:  # ordered within the batch by the client's clock, at most a day back
            age = newest - ts
            when = time_param(received_us - (int(age * 1000 + 0.5) if age < MAX_AGE_MS else MAX_AGE_US))
        utm, props = event.utm, event.props
        values += (site_id, when, event.visitor_id, event.session_id, event.name, event.path)
        if utm is None:
            values += place(event.url, event.referrer, site_host, null)
        else:
            values += place_with_utm(event.url, event.referrer, site_host, utm, null)
        values += tail
        values += (screen_class(event.screen) or null, dumps(props).decode() if props else null)
        values += last
        values.append(language(event.language) or accepted or null)
    return values
