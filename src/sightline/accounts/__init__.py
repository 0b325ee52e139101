"""Owner accounts: users, passwords (Argon2id), server-side sessions, login throttling, setup tokens.

May import: ``sightline.storage``, ``sightline.errors``. Used by ``console`` and ``cli``.
"""
