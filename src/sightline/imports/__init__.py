"""Imported history: a site's figures from before Sightline, from Plausible's CSV export (its zip
of ``imported_*.csv`` files), Umami's events, Matomo's reports or a CSV of daily figures, kept per
day in the SQL database (``imported_figures``) and shown by the reports beside the collected figures.

``formats`` reads an upload as a stream of daily figures (422 naming file, line and column), with
``rows`` (reading CSV), ``umami`` and ``matomo`` (those tools' exports);
``service`` accepts an upload (checksum, overlap), lists and deletes imports; ``jobs`` runs an
import in the background with its progress; ``figures`` is what reports read.
``feature`` plugs the jobs into the server (``sightline.features``).
May import: ``sightline.database``, ``sightline.errors``, ``sightline.channels`` (a source's channel),
``sightline.dimensions`` (which dimensions an import holds), ``sightline.source_names`` (imported
sources named as live ones), ``sightline.features``. Used by ``console``, ``reports``, ``mail``,
``context`` and ``wiring``.
"""
