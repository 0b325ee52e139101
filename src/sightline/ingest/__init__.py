"""Ingest: the SDK-facing hot path outside ``/api/`` (``/analytics.js``, ``/i/config``, ``/i/events``).

Batches from the SDK go through an ordered pipeline of named steps (parse, validate, authorise,
filter_bots, enrich, buffer, commit) and are answered only once a group commit stored them.
No sessions, no console. May import: ``sightline.sites`` (key lookup, origin matching, marking
traffic), ``sightline.storage``, ``sightline.health``, ``sightline.settings``, ``sightline.errors``.
Never imports ``sightline.console`` (nor the console it).
"""
