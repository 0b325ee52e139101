"""Visitors: cookieless visitor codes (daily salts, server-side visits) and visitors' data rights
(erasure, export, retention).

``feature`` plugs the retention job and its probe into the server (``sightline.features``).

May import: ``sightline.database``, ``sightline.errors``, ``sightline.settings``, ``sightline.health``,
``sightline.jobs``, ``sightline.features``, ``sightline.recordings`` (to erase a visitor's
recordings). Never imports ``console`` or ``ingest``; both call into it.
"""
