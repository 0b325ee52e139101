"""Annotations: dated notes on a site's graph (a release, a campaign, an outage).

``service`` checks them as the API receives them and keeps them in the SQL database; the reports'
time series carries the notes of its period, so the console, shared dashboards and the stats API
show them on the graph. May import: ``sightline.database``, ``sightline.errors``,
``sightline.sites``. Never imports ``console``, ``ingest``, ``reports`` or ``store``.
"""
