"""Every example runs, offline, as a user would run it: once each (a run costs seconds of CPU),
its output checked where :data:`CHECKS` says what it must show."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_example_runs(example: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip()
    CHECKS.get(example.name, _shown)(done)


def _shown(done: subprocess.CompletedProcess[str]) -> None:
    """An example without checks of its own: it ran and said something (above)."""


def _function_tools_example_completes_the_round_trip(
    done: subprocess.CompletedProcess[str],
) -> None:
    assert 'model called get_weather({"city": "Paris"})' in done.stdout
    assert "answer: It is sunny in Paris" in done.stdout
    assert "(completed)" in done.stdout


def _conversation_example_compacts_the_history(done: subprocess.CompletedProcess[str]) -> None:
    assert "output: ['compaction', 'message']" in done.stdout
    assert "Ada is planning a spring trip to Paris.', 'What should I pack?']" in done.stdout
    assert "conversation items: ['message', 'message', 'message', 'compaction', 'message']" in (
        done.stdout
    )


def _file_search_example_cites_the_manual(done: subprocess.CompletedProcess[str]) -> None:
    assert "searched ['kettle warranty']: 1 passage(s)" in done.stdout
    assert "cites kettle.md at character 46" in done.stdout


def _llama_stack_example_runs_its_shapes_unchanged(done: subprocess.CompletedProcess[str]) -> None:
    assert "/v1/agents/responses: A single pixel." in done.stdout
    assert "image_url stored as a string: data:image/png;base64," in done.stdout
    assert "max_infer_iters above the cap: 'max_infer_iters'" in done.stdout
    assert "NaN refused (400): param 'temperature'" in done.stdout


def _llama_stack_agent_example_runs_the_seed_sample(done: subprocess.CompletedProcess[str]) -> None:
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "shield_call> No Violation",
        "inference> Let me look at the code.",
        'tool_execution> file_search ["sum"] (on the server)',
    ]
    assert "shield_call> No Violation" in lines[3:6]
    assert "'Output: Again: " in done.stdout
    assert "direction='output', shields=('llama_guard',), violation=None" in done.stdout


def _llm_sync_example_runs_the_seeds_flow_synchronously(
    done: subprocess.CompletedProcess[str],
) -> None:
    assert "image: It is a single pixel." in done.stdout
    assert "encrypted reasoning present: True" in done.stdout
    assert 'tool call: foo({"x": 1}) id=fc_call_abc123 origin=responses' in done.stdout
    assert 'as the model sent it: {"x": 1, "note": null}' in done.stdout
    assert "after the tool: foo says ok." in done.stdout
    assert "condensed 3 messages into: The user asked about a pixel" in done.stdout
    assert "answer: You said: Tell me more" in done.stdout


CHECKS: dict[str, Callable[[subprocess.CompletedProcess[str]], None]] = {
    "function_tools.py": _function_tools_example_completes_the_round_trip,
    "conversation.py": _conversation_example_compacts_the_history,
    "file_search.py": _file_search_example_cites_the_manual,
    "llama_stack_shapes.py": _llama_stack_example_runs_its_shapes_unchanged,
    "llama_stack_agent.py": _llama_stack_agent_example_runs_the_seed_sample,
    "llm_sync_responses.py": _llm_sync_example_runs_the_seeds_flow_synchronously,
}
