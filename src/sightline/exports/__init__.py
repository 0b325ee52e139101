"""CSV exports of reports: every report table (summary, time series, breakdowns) as the report API
answers it, and a period's raw events streamed from the durable log (the SQL ``events`` table).

Every cell goes through ``sightline.spreadsheet.safe_cell``. Imports ``database`` (the log),
``dimensions`` (the raw events' columns) and ``spreadsheet`` only; the console asks the reports and
hands their answers here. Used by ``console``.
"""
