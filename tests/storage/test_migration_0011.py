"""Migration 0011: files that were waiting to be ingested get the jobs that now ingest them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from agentloom.storage import schema
from agentloom.storage.database import MIGRATIONS


def _upgrade(engine: sa.Engine, target: str) -> None:
    script = ScriptDirectory(str(MIGRATIONS))

    def upgrade(revision: Any, _context: MigrationContext) -> Any:
        return script._upgrade_revs(target, revision)

    with engine.begin() as conn:
        context = MigrationContext.configure(conn, opts={"script": script, "fn": upgrade})
        with Operations.context(context):
            context.run_migrations()


def test_files_in_progress_get_ingestion_jobs(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    _upgrade(engine, "0010")
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO vector_stores (id, project_id, created_at, name, metadata,"
                " last_active_at, embedder, dimensions) VALUES"
                " ('vs_1', 'proj_a', 1, 's', '{}', 1, 'e', 3)"
            )
        )
        for file_id, status in (("file-1", "in_progress"), ("file-2", "completed")):
            conn.execute(
                sa.text(
                    "INSERT INTO vector_store_files (vector_store_id, file_id, created_at, status,"
                    " attributes, chunking_strategy) VALUES ('vs_1', :f, 1, :s, '{}', '{}')"
                ),
                {"f": file_id, "s": status},
            )

    _upgrade(engine, "head")

    jobs = schema.jobs
    with engine.connect() as conn:
        rows = conn.execute(sa.select(jobs.c.project_id, jobs.c.kind, jobs.c.subject)).all()
    assert [tuple(r) for r in rows] == [("proj_a", "ingest", "vs_1/file-1")]
    engine.dispose()
