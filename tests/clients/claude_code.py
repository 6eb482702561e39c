"""Driving Claude Code (``claude -p``) against agentloom's Messages API.

Claude Code is pointed at agentloom as a user would (``ANTHROPIC_BASE_URL``, an API key), with
every model it uses (the main one and the small, fast one) set to the fake backend's, and its
traffic beyond the model calls (telemetry, error reports, updates) turned off: anything else it
sends goes to a closed port (:data:`tests.clients.node.NO_INTERNET`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.clients import node

API_KEY = "sk-agentloom-test"


@dataclass(frozen=True)
class ClaudeRun:
    returncode: int
    result: dict[str, Any]  # what --output-format json printed
    stderr: str
    stdout: str

    def describe(self) -> str:
        return (
            f"exit {self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"
        )


def binary() -> Path:
    return node.require(
        node.NODE_MODULES / ".bin" / "claude", "npm package @anthropic-ai/claude-code"
    )


def run(
    prompt: str, *, base_url: str, model: str, scratch: Path, extra: tuple[str, ...] = ()
) -> ClaudeRun:
    """``claude -p`` in ``scratch/work`` with a home of its own under ``scratch``."""
    work = scratch / "work"
    work.mkdir(parents=True, exist_ok=True)
    root = base_url.removesuffix("/v1")  # Claude Code adds /v1/messages itself
    env = {
        "HOME": str(scratch),
        "CLAUDE_CONFIG_DIR": str(scratch / ".claude"),
        "ANTHROPIC_BASE_URL": root,
        "ANTHROPIC_API_KEY": API_KEY,
        "ANTHROPIC_MODEL": model,
        "ANTHROPIC_SMALL_FAST_MODEL": model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "ANTHROPIC_DEFAULT_SONNET_MODEL": model,
        "ANTHROPIC_DEFAULT_OPUS_MODEL": model,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CI": "1",
    }
    args = [binary(), "-p", prompt, "--output-format", "json", "--model", model, *extra]
    done = node.run(args, env=env, cwd=work, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {}
    return ClaudeRun(done.returncode, result, done.stderr, done.stdout)
