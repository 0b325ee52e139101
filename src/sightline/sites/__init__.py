"""Sites: the owner's site connections, their public keys, snippets and connection state.

May import: ``sightline.database``, ``sightline.errors``, ``sightline.autocapture`` (its settings),
``sightline.text`` (the one-line rule for names).
Used by ``console`` (owner side) and ``ingest`` (key lookup, marking traffic), which never import each other.
"""
