"""Goals of a site: what counts as a conversion (a page viewed or a custom event sent).

``definition`` checks a goal as the API receives it; ``service`` keeps goals in the SQL database.
Reports turn goals into conditions on the analytics store (``sightline.reports.conversions``).
May import: ``sightline.database``, ``sightline.errors``, ``sightline.sites``, ``sightline.surveys``
(the path rules). Never imports ``console``, ``ingest``, ``reports`` or ``store``.
"""
