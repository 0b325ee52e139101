"""Reports: the figures of a site per period, each one query on the analytics store.

``queries`` holds every report's SQL, written once for both store engines; ``period`` turns ranges
into UTC spans in the site's time zone; ``params`` checks the API's query parameters; ``service``
runs the queries for the console and shapes the answers; ``kept`` is the one layer of figures kept
between requests, dropped by the store's record of each write (``goal_days`` keeps the Goals
panel's past days in it, ``series_days``, ``table_days`` and ``visit_days`` the time series' and
tables' ended days, ``overview_days`` every site's ended days and hours for the overview, which
``warm`` reads at the start (``feature``: its job); ``realtime`` the
realtime report's last 30 minutes beside it). ``filters`` are the
report filters, ``rules`` and ``steps`` the conditions on events of goals and steps, ``goals`` the
Goals panel; ``funnels``, ``retention`` and ``journeys`` the conversion reports (``conversions``
shapes them); ``saved`` keeps saved funnels and segments; ``autocapture`` the reports of the SDK's
captures (404 pages, links, downloads, engagement, web vitals). ``imported`` adds imported history
(``sightline.imports.figures``) to the summary, series and breakdowns.
May import: ``sightline.features`` (its job), ``sightline.imports`` (imported figures),
``sightline.sites`` (owner's site lookup), ``sightline.goals`` (a site's goals),
``sightline.autocapture`` (its reserved event names),
``sightline.store`` (its dialects and the store interface), ``sightline.database``,
``sightline.errors``, ``sightline.numbers``, ``sightline.channels`` (the channel rules). Never
imports ``sightline.console`` or ``sightline.ingest``.
"""
