"""Reports: the figures of a site per period, each one query on the analytics store.

``queries`` holds every report's SQL, written once for both store engines; ``period`` turns
ranges into UTC spans in the site's time zone; ``params`` checks the API's query parameters;
``service`` runs the queries for the console and shapes the answers.
May import: ``sightline.sites`` (owner's site lookup), ``sightline.store`` (its dialects and the
store interface), ``sightline.storage``, ``sightline.errors``, ``sightline.numbers``. Never imports
``sightline.console`` or ``sightline.ingest``.
"""
