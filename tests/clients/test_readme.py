"""The README's "Use it with ..." snippets, run as written against a running agentloom.

(The Codex one is the config every test in ``test_codex.py`` runs with.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.clients import node, readme
from tests.e2e.support import received

ANSWER = "Hello from agentloom!"


@pytest.fixture
def backend(backend: FakeBackend) -> FakeBackend:
    """The fake backend, serving the README's model name."""
    backend.models = (readme.README_MODEL,)
    return backend


@pytest.mark.parametrize("client", ["OpenAI Agents SDK (Python)", "LangChain"])
def test_python_snippet(
    client: str,
    agentloom_url: str,
    backend: FakeBackend,
    scripted: ScriptedModel,
    tmp_path: Path,
) -> None:
    scripted.add_turn(ANSWER)
    script = tmp_path / "snippet.py"
    script.write_text(readme.snippet(client, "python", url=agentloom_url))

    done = node.run([sys.executable, script], env={}, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout == ANSWER + "\n"
    assert received(backend)[0]["messages"][-1] == {"role": "user", "content": "Say hello"}


def test_vercel_ai_snippet(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    node.package("ai")
    node.package("@ai-sdk/openai")
    scripted.add_turn(ANSWER)
    (tmp_path / "node_modules").symlink_to(node.NODE_MODULES)
    script = tmp_path / "snippet.mjs"
    script.write_text(readme.snippet("Vercel AI SDK", "js", url=agentloom_url))

    done = node.run([node.node(), script], env={}, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout == ANSWER + "\n"
