"""Reports: the figures of a site per period, kept fast by rollups that a background job maintains.

``rollup`` folds new events (after a watermark) into per-visit state and hourly/daily rollups
with mergeable visitor sketches (``sketch``), written by ``writes``, plus whole-site rows per
local day of the site's zone (``localdays``); ``rollups`` reads the default dashboard from them;
``columns`` answers filtered reports (and half-hour zones) from a DuckDB column store kept by the
worker, ``raw`` the same from the visits and events meanwhile; ``period`` turns ranges into UTC
spans in the site's time zone; ``params`` checks the API's query parameters; ``service`` puts
it together for the console; ``worker`` runs the job in the server's lifespan.
May import: ``sightline.sites`` (owner's site lookup), ``sightline.storage``, ``sightline.health``,
``sightline.errors``. Never imports ``sightline.console`` or ``sightline.ingest``.
"""
