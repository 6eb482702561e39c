"""Structured text mode: the parser's variants and the orchestrator running on it."""

from __future__ import annotations

import json

import pytest

from agentloom.agents import OrchestratorAgent, function_tool
from agentloom.agents.structured import parse_structured, structured_prompt
from agentloom.agents.text_protocol import FinalAnswer, Malformed, ToolRequest, extract_json
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.mark.parametrize(
    "reply",
    [
        'THOUGHT: I should add.\nTOOL: add\nINPUT: {"a": 1, "b": 2}',
        'thought: I should add.\ntool: add\ninput: {"a": 1, "b": 2}',
        'Thought : I should add.\n  Tool :  add  \n  Input :\n{"a": 1, "b": 2}\n',
        '**Thought:** I should add.\n**Tool:** `add`\n**Input:**\n```json\n{"a": 1, "b": 2}\n```',
        'THOUGHT: I should add.\nACTION: add\nACTION_INPUT: {"a": 1, "b": 2}',
        'THOUGHT: I should add.\nTOOL: add\nTOOL INPUT: {"a": 1, "b": 2} to get the sum',
        'THOUGHT: I should add.\nTOOL: add\nINPUT: {"a": 1, "b": 2}\n'
        "OBSERVATION: 3\nFINAL_ANSWER: 3",
    ],
)
def test_tool_requests_parse_in_every_spelling(reply: str) -> None:
    step = parse_structured(reply)

    assert isinstance(step, ToolRequest)
    assert step.name == "add"
    assert json.loads(step.arguments) == {"a": 1, "b": 2}
    assert step.thought == "I should add."


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("THOUGHT: done\nFINAL_ANSWER: 42", "42"),
        ("final answer: 42", "42"),
        ("Final-Answer:\nLine one.\nLine two.", "Line one.\nLine two."),
        ("### FINAL_ANSWER: 42\n", "42"),
    ],
)
def test_final_answers_parse_and_keep_every_line(reply: str, answer: str) -> None:
    step = parse_structured(reply)

    assert isinstance(step, FinalAnswer)
    assert step.answer == answer


def test_a_tool_without_input_gets_empty_arguments_and_bad_json_is_kept_for_the_executor() -> None:
    assert parse_structured("TOOL: now") == ToolRequest("now", "{}")
    bad = parse_structured("TOOL: add\nINPUT: {a: 1}")
    assert isinstance(bad, ToolRequest)
    assert bad.arguments == "{a: 1}"


@pytest.mark.parametrize("reply", ["Just an answer without labels.", "THOUGHT: hmm", "TOOL:\n"])
def test_replies_without_a_decision_are_malformed(reply: str) -> None:
    assert isinstance(parse_structured(reply), Malformed)


def test_extract_json_finds_the_object_in_surrounding_text() -> None:
    assert extract_json('here: {"a": {"b": 1}} thanks') == '{"a": {"b": 1}}'
    assert extract_json("```\n[1, 2]\n```") == "[1, 2]"
    assert extract_json("") == "{}"


def test_the_prompt_describes_each_tool_and_the_format() -> None:
    prompt = structured_prompt([add.spec()], "Be exact.")

    assert prompt.startswith("Be exact.")
    assert "- add: Add two numbers." in prompt
    assert '"required": ["a", "b"]' in prompt
    assert "FINAL_ANSWER:" in prompt


async def test_the_orchestrator_runs_the_structured_protocol() -> None:
    model = ScriptedModel(
        [
            "I will just answer.",  # malformed: corrected, not a crash
            'THOUGHT: add them\nTOOL: add\nINPUT: {"a": 2, "b": 3}',
            "TOOL: add\nINPUT: {oops}",
            "Thought: got it\nFinal Answer: 5",
        ]
    )
    agent = OrchestratorAgent(LLM("m", provider=model), [add], mode="structured")

    result = await agent.run("What is 2 + 3?")

    assert result.content == "5"
    assert result.stop_reason == "final"
    assert result.turns == 4
    assert result.tool_results[0].output == "5"
    assert model.requests[0].tools == ()  # tools are in the prompt, not native
    assert "- add: Add two numbers." in str(model.requests[0].messages[0].content)
    corrections = [m.content or "" for m in model.requests[3].messages if m.role == "user"][1:]
    assert corrections[0].startswith("OBSERVATION: error: your reply could not be used")
    assert corrections[1] == "OBSERVATION: 5"
    assert corrections[2].startswith("OBSERVATION: error: invalid arguments for add")


async def test_structured_mode_stops_at_max_turns_with_a_note() -> None:
    model = ScriptedModel(['TOOL: add\nINPUT: {"a": 1, "b": 1}'] * 2)
    agent = OrchestratorAgent(LLM("m", provider=model), [add], mode="structured", max_turns=2)

    result = await agent.run("loop")

    assert result.max_turns_exceeded
    assert result.content == "Stopped after 2 turns without a final answer."
