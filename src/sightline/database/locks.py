"""Making a read-then-write one atomic step on both SQL databases.

A check followed by an insert ("no other import overlaps these days, so accept this one") is
atomic only when no other transaction can run the same check in between. ``lock_row`` takes,
as the transaction's first statement, a lock that concurrent transactions doing the same wait
for until this one commits:

- PostgreSQL: ``SELECT ... FOR UPDATE`` on the row (a row lock; under READ COMMITTED each later
  statement of the transaction sees what the other one committed);
- SQLite: a no-op ``UPDATE`` of one plain column of the row (never a key, whose change would
  make SQLite check every referencing row), which takes the database's write lock at once
  (Python's sqlite3 otherwise starts the transaction only at its first write, so the check would
  run outside it); a write transaction always reads the newest data.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Connection, Table, select, update


def lock_row(conn: Connection, touch: Column[Any], key: int) -> None:
    """Lock the row whose ``id`` is ``key`` in ``touch``'s table until the transaction ends
    (``touch``: a plain column of it, rewritten with its own value on SQLite)."""
    table = touch.table
    assert isinstance(table, Table)
    if conn.dialect.name == "sqlite":
        conn.execute(update(table).where(table.c.id == key).values({touch: touch}))
    else:
        conn.execute(select(table.c.id).where(table.c.id == key).with_for_update())
