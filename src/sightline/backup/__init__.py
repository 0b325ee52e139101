"""Backups: ``sightline backup DIR`` and ``sightline restore DIR`` (PRODUCT.md, "Operations").

A backup is a directory of named parts (``parts.py``: the embedded analytics store as Parquet
files; the database, by SQLite's online backup API or ``pg_dump``; the recordings' chunks, from a
directory or an S3-compatible bucket) and ``manifest.json`` (``manifest.py``: format, version,
engine, schema revisions, and every file's size and SHA-256). It is made while the server runs.
``restore`` refuses a directory that is not a Sightline backup, one whose files do not match the
manifest, one from a newer schema, a part this Sightline cannot load, and a target that already
holds data; then it restores every part and migrates the database to the current schema.
Another part joins by adding a ``Part`` to ``parts.PARTS``.

May import: ``sightline.database``, ``sightline.store.snapshot``, ``sightline.recordings.store``,
``sightline.settings``.
"""
