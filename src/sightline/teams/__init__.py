"""Teams: who may do what. Members and their roles (owner, admin, viewer), invitations by one-time
link, API keys for the stats API, shared dashboard links, and the request limits of the last two.

May import: ``sightline.accounts``, ``sightline.storage``, ``sightline.errors``. Used by
``console``, ``web`` and ``cli``; never imports ``console`` or ``ingest``.
"""
