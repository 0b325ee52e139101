"""Autocapture: what the SDK captures by itself (outbound links, file downloads, 404 pages, tagged
elements, engagement, web vitals, heatmap clicks), as site settings and as reserved events.

``settings.py`` holds the per-site switches (their names in the console API, in ``/i/config`` and
in the snippet) and the file-download extensions; ``events.py`` holds the reserved event names and
the rules their props follow, which ingest checks like every other event field.
May import: ``sightline.errors``. Used by ``sites`` (settings), ``console`` and ``ingest``.
"""
