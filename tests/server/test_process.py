"""A serving process settles its heap and GIL once started; an embedded app leaves the process
as it found it. Run in subprocesses: both change interpreter-wide state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import asyncio, gc, sys
from agentloom.config import DatabaseSettings, EmbeddingSettings, Settings
from agentloom.server.app import create_app
from agentloom.server.process import GC_THRESHOLDS, SWITCH_INTERVAL

settings = Settings(
    database=DatabaseSettings(url=sys.argv[1]),
    embeddings=EmbeddingSettings(
        type="openai_compatible", base_url="http://127.0.0.1:9/v1", model="none"
    ),
)
before = (gc.get_threshold(), sys.getswitchinterval(), gc.get_freeze_count())

async def main() -> None:
    app = create_app(settings, serving=sys.argv[2] == "serving")
    async with app.router.lifespan_context(app):
        after = (gc.get_threshold(), sys.getswitchinterval(), gc.get_freeze_count())
    if sys.argv[2] == "serving":
        assert after[:2] == (GC_THRESHOLDS, SWITCH_INTERVAL), after
        assert after[2] > 10_000, after  # the start-up heap is frozen
    else:
        assert after == before, (before, after)

asyncio.run(main())
"""


def _run(tmp_path: Path, mode: str) -> None:
    url = f"sqlite:///{tmp_path / 'process.db'}"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, url, mode], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_serving_process_freezes_its_heap_and_shortens_the_switch_interval(
    tmp_path: Path,
) -> None:
    _run(tmp_path, "serving")


def test_an_embedded_app_leaves_the_process_alone(tmp_path: Path) -> None:
    _run(tmp_path, "embedded")
