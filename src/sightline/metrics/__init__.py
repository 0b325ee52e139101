"""Metrics for monitoring: ``GET /metrics`` in Prometheus' text format (the official client library).

``buckets.py`` keeps latency histograms as plain counts (cheap on the hot path), ``http.py`` the
outermost ASGI layer that counts and times every request by route template and gives it a request
id, ``collectors.py`` turns what each part already counts into metrics at scrape time, and
``endpoint.py`` answers ``/metrics`` to a token holder or a loopback client.

May import: ``sightline.logs``, ``sightline.errors``, ``sightline.clientaddr``. Reads the other
parts through small protocols; never imports them. Each feature builds its collectors (its
``feature.py``, ``sightline.features``) and ingest imports ``buckets`` from here.
"""
