"""Owner accounts: users, passwords (Argon2id), server-side sessions, login throttling, setup tokens.

May import: ``sightline.database``, ``sightline.errors``. Used by ``console`` and ``cli``.
"""
