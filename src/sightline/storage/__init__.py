"""Storage: the schema, its Alembic migrations, and engines for SQLite and PostgreSQL.

May import: ``sightline.settings`` only. Feature modules import this package; it imports none of them.
"""

from sightline.storage.database import Database, open_database
from sightline.storage.locks import lock_row
from sightline.storage.schema import metadata

__all__ = ["Database", "lock_row", "metadata", "open_database"]
