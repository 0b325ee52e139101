"""Feedback surveys: definitions, immutable revisions, page targeting, responses and CSV export.

The console (owner side) and the ingest paths (the in-page widget) both go through this package;
it holds every rule about surveys so neither surface repeats one.

``feature`` plugs in the metrics of the widget's responses (``sightline.features``).

May import: ``sightline.database``, ``sightline.sites``, ``sightline.errors``, ``sightline.numbers``,
``sightline.spreadsheet``, ``sightline.features`` and ``sightline.metrics``. Never imports
``sightline.console`` or ``sightline.ingest``.
"""
