"""The SQL database (SQLite or PostgreSQL): the schema, its Alembic migrations, and the engines.

Imports nothing of Sightline's but its version (``sightline.__version__``). Feature modules import
this package; it imports none of them.
"""

from sightline.database.engines import Database, open_database
from sightline.database.locks import lock_row
from sightline.database.schema import metadata

__all__ = ["Database", "lock_row", "metadata", "open_database"]
