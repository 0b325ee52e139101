"""The SQL database (SQLite or PostgreSQL): the schema, its Alembic migrations, and the engines.

May import: ``sightline.settings`` only. Feature modules import this package; it imports none of them.
"""

from sightline.database.engines import Database, open_database
from sightline.database.locks import lock_row
from sightline.database.schema import metadata

__all__ = ["Database", "lock_row", "metadata", "open_database"]
