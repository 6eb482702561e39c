"""Every example runs, offline, as a user would run it."""

from __future__ import annotations

import subprocess
import sys
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


def test_function_tools_example_completes_the_round_trip() -> None:
    example = Path(__file__).parent.parent / "examples" / "function_tools.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=True
    )

    assert 'model called get_weather({"city": "Paris"})' in done.stdout
    assert "answer: It is sunny in Paris" in done.stdout
    assert "(completed)" in done.stdout


def test_conversation_example_compacts_the_history() -> None:
    example = Path(__file__).parent.parent / "examples" / "conversation.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=True
    )

    assert "output: ['compaction', 'message']" in done.stdout
    assert "Ada is planning a spring trip to Paris.', 'What should I pack?']" in done.stdout
    assert "conversation items: ['message', 'message', 'message', 'compaction', 'message']" in (
        done.stdout
    )


def test_file_search_example_cites_the_manual() -> None:
    example = Path(__file__).parent.parent / "examples" / "file_search.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=True
    )

    assert "searched ['kettle warranty']: 1 passage(s)" in done.stdout
    assert "cites kettle.md at character 46" in done.stdout


def test_llama_stack_example_runs_its_shapes_unchanged() -> None:
    example = Path(__file__).parent.parent / "examples" / "llama_stack_shapes.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=True
    )

    assert "/v1/agents/responses: A single pixel." in done.stdout
    assert "image_url stored as a string: data:image/png;base64," in done.stdout
    assert "max_infer_iters above the cap: 'max_infer_iters'" in done.stdout
    assert "NaN refused (400): param 'temperature'" in done.stdout


def test_llama_stack_agent_example_runs_the_seed_sample() -> None:
    example = Path(__file__).parent.parent / "examples" / "llama_stack_agent.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=True
    )

    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "shield_call> No Violation",
        "inference> Let me look at the code.",
        'tool_execution> file_search ["sum"] (on the server)',
    ]
    assert "shield_call> No Violation" in lines[3:6]
    assert "'Output: Again: " in done.stdout
    assert "direction='output', shields=('llama_guard',), violation=None" in done.stdout


def test_llm_sync_example_runs_the_seeds_flow_synchronously() -> None:
    example = Path(__file__).parent.parent / "examples" / "llm_sync_responses.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=True
    )

    assert "image: It is a single pixel." in done.stdout
    assert "encrypted reasoning present: True" in done.stdout
    assert 'tool call: foo({"x": 1}) id=fc_call_abc123 origin=responses' in done.stdout
    assert 'as the model sent it: {"x": 1, "note": null}' in done.stdout
    assert "after the tool: foo says ok." in done.stdout
    assert "condensed 3 messages into: The user asked about a pixel" in done.stdout
    assert "answer: You said: Tell me more" in done.stdout
