"""Store rows that tests write by hand, by column name.

A fixture lists its values in the order below, and the insert names the columns, so a visit
attribute added to the store later (``sightline.dimensions``) takes its default (empty) in these
rows and no fixture changes. ``channel`` is the visit's channel as the feed writes it.
"""

from __future__ import annotations

_ATTRIBUTES = (
    "source",
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "browser",
    "os",
    "device",
    "country",
    "region",
    "city",
)
_EVENT = ("site_id", "time", "id", "visitor", "visit", "name", "path", "props", "visit_start")
_VISIT = ("site_id", "visit", "session", "visitor", "born", "start", "last", "pageviews", "events")
EVENT_COLUMNS = (*_EVENT, *_ATTRIBUTES, "channel")
VISIT_COLUMNS = (*_VISIT, "entry", "entry_at", "exit", "exit_at", *_ATTRIBUTES, "version", "channel")
# ``INSERT INTO {EVENTS} SELECT ...`` / ``VALUES (...)``: the table with its columns named.
EVENTS = f"events ({', '.join(EVENT_COLUMNS)})"
VISITS = f"visits ({', '.join(VISIT_COLUMNS)})"
