"""Visitors: cookieless visitor codes (daily salts, server-side visits) and visitors' data rights
(erasure, export, retention).

May import: ``sightline.database``, ``sightline.errors``, ``sightline.settings``,
``sightline.recordings`` (to erase a visitor's recordings). Never imports ``console`` or
``ingest``; both call into it.
"""
