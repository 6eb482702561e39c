"""Alembic migrations, applied at startup by :meth:`agentloom.storage.database.Database.migrate`."""
