"""A columnar copy of the visits and events, in DuckDB, for the reports the rollups cannot answer.

Filtered reports (page, source, event) and zones with a half-hour offset select visits and scan
their events; a row store does that in seconds on a large site, a column store in milliseconds.
``store`` owns the DuckDB file (``DATA_DIR/reports.duckdb``): schema, version and watermark.
``sync`` copies what the rollup job has folded (events after the copy's watermark, and the
visits they touched) from the SQL database, in one DuckDB transaction per batch. ``queries``
answers exactly what ``sightline.reports.raw`` answers, from the copy.

The copy is derived data: it is rebuilt from the SQL database when missing, damaged or made
by another DuckDB version, and until it has caught up the reports read the SQL database.
May import: ``sightline.storage``, ``sightline.reports.rollup`` and ``sightline.reports.raw``
(shared definitions). Never imports ``sightline.console`` or ``sightline.ingest``.
"""
