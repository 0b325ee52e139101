"""Teams: who may do what. Members and their roles (owner, admin, viewer), invitations by one-time
link, API keys with their scopes (``scopes.py``: the one table of which route needs which scope),
shared dashboard links, and the request limits of the last two.

May import: ``sightline.accounts``, ``sightline.database``, ``sightline.errors``. Used by
``console``, ``web``, ``cli``, ``assistants`` and ``ingest`` (the key of ``POST /api/events``);
never imports ``console`` or ``ingest``.
"""
