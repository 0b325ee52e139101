"""The owner console API under ``/api``: thin handlers over the feature modules.

May import: feature modules (``accounts``, ``sites``, ``health``), ``database``, ``errors``,
``context``. Never imports ``ingest``.
"""
