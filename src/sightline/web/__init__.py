"""Console pages and static assets (the setup page today; the console application later), and the
security headers every console response carries.

May import: ``accounts``, ``context``, ``teams``, ``mail`` (the unsubscribe link). Pages call the
console API from the browser; never ``ingest``.
"""
