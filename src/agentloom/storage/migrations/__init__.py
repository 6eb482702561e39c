"""Alembic migrations, applied at startup by :meth:`agentloom.storage.database.Database.migrate`."""

from typing import Final

# The newest revision: a database at it needs no migration (and no import of Alembic). A new
# revision moves it; tests/storage/test_migration_head.py holds it to the revisions' own head.
HEAD: Final = "0026"
