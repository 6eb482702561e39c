"""Driving the Codex CLI (``codex exec``) against agentloom as a custom model provider.

Each run gets a CODEX_HOME of its own whose ``config.toml`` is the README's (a
``[model_providers.agentloom]`` table with ``wire_api = "responses"`` and the key read from an
environment variable) plus settings for unattended runs. ``codex exec --json`` prints one JSON
event a line; :class:`CodexRun` keeps them, with the final message ``--output-last-message``
wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.clients import node, readme

API_KEY_ENV = "AGENTLOOM_API_KEY"

# Settings of these runs, on top of the README's config: no approvals to wait for, the shell
# tool sandboxed to the work directory, nothing sent to OpenAI.
TEST_ROOT_KEYS = """\
approval_policy = "never"
sandbox_mode = "{sandbox}"
check_for_update_on_startup = false
"""
TEST_TABLES = """
[analytics]
enabled = false
"""


@dataclass(frozen=True)
class CodexRun:
    """What one ``codex exec`` printed."""

    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    last_message: str

    def items(self, kind: str) -> list[dict[str, Any]]:
        """The completed thread items of one type (``agent_message``, ``command_execution``)."""
        return [
            e["item"]
            for e in self.events
            if e.get("type") == "item.completed" and e.get("item", {}).get("type") == kind
        ]

    def errors(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") in {"error", "turn.failed"}]

    def describe(self) -> str:
        return f"exit {self.returncode}\nevents: {self.events}\nstderr: {self.stderr[-3000:]}"


def binary() -> Path:
    """The ``codex`` launcher of the installed ``@openai/codex`` package."""
    return node.require(node.NODE_MODULES / ".bin" / "codex", "npm package @openai/codex")


def config(*, base_url: str, model: str, sandbox: str) -> str:
    """The README's ``config.toml`` for ``base_url`` and ``model``, plus the test settings."""
    documented = readme.snippet("Codex CLI", "toml", url=base_url)
    assert f'env_key = "{API_KEY_ENV}"' in documented
    documented = documented.replace(f'model = "{readme.README_MODEL}"', f'model = "{model}"', 1)
    return TEST_ROOT_KEYS.format(sandbox=sandbox) + documented + TEST_TABLES


def write_home(home: Path, *, base_url: str, model: str, sandbox: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    text = config(base_url=base_url, model=model, sandbox=sandbox)
    (home / "config.toml").write_text(text)
    return home


def run_exec(
    prompt: str,
    *,
    base_url: str,
    model: str,
    scratch: Path,
    sandbox: str = "workspace-write",
    extra: tuple[str, ...] = (),
) -> CodexRun:
    """``codex exec`` in ``scratch/work`` with a fresh CODEX_HOME under ``scratch``."""
    home = write_home(scratch / "codex-home", base_url=base_url, model=model, sandbox=sandbox)
    work = scratch / "work"
    work.mkdir(exist_ok=True)
    last = scratch / "last-message.txt"
    # Codex refuses to put its helper binaries (the sandbox launcher) in a CODEX_HOME under
    # the temporary directory, and its sandbox cannot start without them: give it another one.
    own_tmp = scratch / "tmp"
    own_tmp.mkdir(exist_ok=True)
    args = [binary(), "exec", "--json", "--strict-config", "--skip-git-repo-check", "--ephemeral"]
    result = node.run(
        [*args, "--output-last-message", last, *extra, prompt],
        env={
            "CODEX_HOME": str(home),
            "HOME": str(scratch),
            "TMPDIR": str(own_tmp),
            API_KEY_ENV: "sk-agentloom-test",
        },
        cwd=work,
    )
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    text = last.read_text() if last.exists() else ""
    return CodexRun(result.returncode, events, result.stderr, text)
