"""Feedback surveys: definitions, immutable revisions, page targeting, responses and CSV export.

The console (owner side) and the ingest paths (the in-page widget) both go through this package;
it holds every rule about surveys so neither surface repeats one.

May import: ``sightline.database``, ``sightline.sites``, ``sightline.errors``. Never imports
``sightline.console`` or ``sightline.ingest``.
"""
