"""Session recordings: chunk validation, the chunk store, the index, retention and health.

The SDK's recorder uploads gzip-compressed chunks of rrweb events; ingest hands them to
``service.Recordings.accept`` (validated by ``chunks``, written durably by a ``store.ChunkStore``:
files in a directory, or objects of an S3-compatible bucket with ``s3``, as ``--recordings-url``
says; indexed in the ``recordings`` tables). The console lists, reads, streams and deletes them
through ``service``; ``retention`` deletes recordings past ``recording_retention_days``.
``feature`` plugs it into the server (``sightline.features``): its probe, the decoder process,
retention and its metrics.

May import: ``sightline.database``, ``sightline.sites``, ``sightline.health``, ``sightline.settings``,
``sightline.locations``, ``sightline.datadir`` (fsync), ``sightline.errors``, ``sightline.numbers``,
``sightline.jobs``, ``sightline.features`` and ``sightline.metrics`` (its feature's parts). Never imports
``sightline.console`` or ``sightline.ingest``.
"""
