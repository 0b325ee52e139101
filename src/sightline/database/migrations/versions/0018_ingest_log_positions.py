"""ingest: a log position is never handed out twice (SQLite's ``events`` becomes AUTOINCREMENT)

The analytics store reads the log by id after its watermark. SQLite's plain rowid gives a new
row the largest id in the table plus one, so deleting the newest events (an erasure, a site's
deletion, the log's trim) handed their ids out again, and the store skipped the new events. With
AUTOINCREMENT SQLite keeps the largest id ever given in ``sqlite_sequence`` and never goes below
it. The table is rebuilt with its rows and ids (one copy of the log: on a large log this takes a
while, once). PostgreSQL's sequence never goes back: nothing to change there.

Installs already hit by the reuse are repaired by the store process at its start (the sequence
moves past the store's watermark) and by its self-check (skipped events are fed):
``store.check``.

Revision ID: 0018_ingest
Revises: 0013c
Create Date: 2026-11-27 15:20:00
"""

from __future__ import annotations

from alembic import op

revision = "0018_ingest"
down_revision = "0013c"
branch_labels = None
depends_on = None


def _rebuild(autoincrement: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table(
        "events", recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}
    ):
        pass


def upgrade() -> None:
    _rebuild(True)


def downgrade() -> None:
    _rebuild(False)
