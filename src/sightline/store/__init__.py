"""The analytics store: one columnar copy of the events that every report reads.

The SQL database's ``events`` table is the durable ingest log; a store process of its own
(``process``) feeds the store from it exactly once (``feed``) and answers the reports' queries,
so neither feeding nor querying ever holds the server's interpreter. The store is DuckDB in the
data directory by default, or a ClickHouse server or cluster (``--events-url``); both run the
same queries, written once against ``dialects``. ``client`` is the server's side: it starts and
supervises the process, asks it queries and reports its health; ``feature`` plugs it into the
server (``sightline.features``).
May import: ``sightline.database``, ``sightline.health``, ``sightline.settings``,
``sightline.autocapture`` (which events are passive), ``sightline.dimensions`` (the visit
attributes it keeps), ``sightline.channels`` (a visit's channel, written once per visit),
``sightline.datadir`` (fsync), ``sightline.errors``, ``sightline.features`` and
``sightline.metrics`` (its feature's parts). Never imports
``sightline.console``, ``sightline.ingest`` or ``sightline.reports``.
"""
