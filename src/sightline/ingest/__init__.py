"""Ingest: the SDK-facing hot path outside ``/api/`` (``/analytics.js``, ``/i/config``, ``/i/events``,
``/i/pixel.gif``) and the one ingest path inside it, ``POST /api/events`` (a backend's events with an
API key, ``server_events.py``).

Batches from the SDK go through an ordered pipeline of named steps (parse, validate, authorise,
filter_bots, enrich, buffer, commit) and are answered only once a group commit stored them.
The group commit's storing half runs in a writer process of its own (``writer_process.py``),
which the server starts and supervises (``writer.py``) and talks to over pipes (``protocol.py``).
The widget's survey and response endpoints (``feedback.py``) and recording chunks
(``recordings.py``) share one way of checking a site's key, Origin and body (``beside.py``) with
the same origin, CORS and body rules. No sessions, no console. ``feature`` plugs ingest into the
server (``sightline.features``); ``sightline.wiring`` adds the feedback and recordings paths to
the surveys and recordings features.
May import: ``sightline.features``, ``sightline.metrics``, ``sightline.logs``, ``sightline.numbers``,
``sightline.sites`` (key lookup, origin matching, marking traffic), the feature modules
``sightline.surveys`` and ``sightline.recordings``, ``sightline.database``,
``sightline.health``, ``sightline.settings``, ``sightline.errors``, ``sightline.geo`` (the
country of a client address, looked up in the writer process), ``sightline.clientaddr``,
``sightline.visitors`` (cookieless visitor codes), ``sightline.autocapture`` (reserved events'
rules, ``/i/config``'s capture list), ``sightline.channels`` (an ad click's id as paid tags),
``sightline.teams`` (an API key and its scopes, for ``/api/events``).
Never imports ``sightline.console`` (nor the console it).
"""
