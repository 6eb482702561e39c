"""The shipped head revision (``agentloom.storage.migrations.HEAD``) is the migrations' own, and a
database at it is migrated without Alembic: a start on a migrated database costs one read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic.script import ScriptDirectory

from agentloom.storage import migrations
from agentloom.storage.database import MIGRATIONS, Database

_PROBE = """
import asyncio, sys
from agentloom.storage.database import Database

async def main(url):
    db = await Database.connect(url, instance_id="inst_probe")
    await db.migrate()
    await db.aclose()

asyncio.run(main(sys.argv[1]))
print("alembic" in sys.modules)
"""


def test_head_is_the_newest_revision() -> None:
    assert ScriptDirectory(str(MIGRATIONS)).get_current_head() == migrations.HEAD


def _imports_alembic(url: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, url], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip() == "True"


def test_a_database_at_head_is_migrated_without_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    assert _imports_alembic(url)  # a new file: every revision applied
    assert not _imports_alembic(url)  # then at head: one read


async def test_migrating_again_changes_nothing(database: Database) -> None:
    await database.migrate()
    rows = await database.runner.fetch("SELECT version_num FROM alembic_version")
    assert [row[0] for row in rows] == [migrations.HEAD]
