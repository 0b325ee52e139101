"""CSV exports of reports: every report table (summary, time series, breakdowns) as the report API
answers it, and a period's raw events streamed from the durable log (the SQL ``events`` table).

Every cell goes through ``sightline.spreadsheet.safe_cell``. May import ``reports``, ``database``,
``spreadsheet``, ``errors``; used by ``console``.
"""
