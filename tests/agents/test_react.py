"""ReAct: the parser's variants and the Thought / Action / Observation loop."""

from __future__ import annotations

import json

import pytest

from agentloom.agents import LoopGuard, ReactAgent, function_tool
from agentloom.agents.react_parser import parse_react, react_prompt
from agentloom.agents.text_protocol import FinalAnswer, Malformed, ToolRequest
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM


@function_tool
def lookup(city: str) -> str:
    """The population of a city."""
    return {"Paris": "2.1 million"}.get(city, "unknown")


@pytest.mark.parametrize(
    "reply",
    [
        'Thought: I need the population.\nAction: lookup\nAction Input: {"city": "Paris"}',
        'thought: I need the population.\naction: lookup\naction input: {"city": "Paris"}',
        'THOUGHT:I need the population.\nACTION:lookup\nACTION_INPUT:{"city": "Paris"}',
        'Thought :  I need the population.\nAction  : lookup\nAction Input :  {"city": "Paris"}  ',
        "Thought: I need the population.\nAction: [lookup]\n"
        'Action Input: ```json\n{"city": "Paris"}\n```',
        'Thought: I need the population.\nAction: lookup\nAction Input: {"city": "Paris"}\n'
        "Observation: 2 million\nThought: I now know\nFinal Answer: 2 million",
        "I need the population.\n\nThought: I need the population.\n**Action:** lookup\n"
        '**Action Input:** {"city": "Paris"}',
    ],
)
def test_actions_parse_case_and_spacing_insensitively(reply: str) -> None:
    step = parse_react(reply)

    assert isinstance(step, ToolRequest)
    assert step.name == "lookup"
    assert json.loads(step.arguments) == {"city": "Paris"}
    assert step.thought == "I need the population."


@pytest.mark.parametrize(
    "reply",
    [
        "Final Answer: 2.1 million",
        "Thought: done\nfinal answer:2.1 million",
        "FINAL_ANSWER: 2.1 million",
    ],
)
def test_final_answer_ends_it(reply: str) -> None:
    step = parse_react(reply)

    assert isinstance(step, FinalAnswer)
    assert step.answer == "2.1 million"


def test_an_action_input_that_is_not_json_is_passed_on_as_written() -> None:
    step = parse_react("Thought: x\nAction: lookup\nAction Input: Paris")

    assert step == ToolRequest("lookup", "Paris", "x")


def test_text_without_action_or_answer_is_malformed() -> None:
    assert isinstance(parse_react("Thought: I am thinking."), Malformed)


def test_the_prompt_lists_the_tools_and_the_format() -> None:
    prompt = react_prompt([lookup.spec()])

    assert "- lookup: The population of a city." in prompt
    assert "one of [lookup]" in prompt
    assert "Final Answer:" in prompt


async def test_the_loop_turns_errors_into_observations_and_finishes() -> None:
    model = ScriptedModel(
        [
            "Thought: look it up\nAction: lookup\nAction Input: Paris",  # not JSON
            'Thought: try again\nAction: search\nAction Input: {"city": "Paris"}',  # unknown
            "Hmm.",  # no action, no answer
            'Thought: properly\nAction: lookup\nAction Input: {"city": "Paris"}',
            "Thought: I now know\nFinal Answer: About 2.1 million people.",
        ]
    )
    agent = ReactAgent(LLM("m", provider=model), [lookup], instructions="Be factual.")

    result = await agent.run("How many people live in Paris?")

    assert result.content == "About 2.1 million people."
    assert result.turns == 5
    observations = [m.content or "" for m in model.requests[4].messages if m.role == "user"][1:]
    assert observations[0].startswith("Observation: error: invalid arguments for lookup")
    assert "not valid JSON" in observations[0]
    assert observations[1].startswith("Observation: error: there is no tool named 'search'")
    assert observations[2].startswith("Observation: error: your reply could not be used")
    assert observations[3] == "Observation: 2.1 million"
    system = model.requests[0].messages[0]
    assert system.role == "system"
    assert str(system.content).startswith("Be factual.")
    assert model.requests[0].tools == ()


async def test_react_stops_at_max_turns_and_on_a_loop() -> None:
    action = 'Thought: again\nAction: lookup\nAction Input: {"city": "Rome"}'
    model = ScriptedModel([action] * 3)
    capped = ReactAgent(LLM("m", provider=model), [lookup], max_turns=3)

    capped_result = await capped.run("?")

    assert capped_result.max_turns_exceeded
    assert capped_result.content == "Stopped after 3 turns without a final answer."

    looping = ReactAgent(
        LLM("m", provider=ScriptedModel([action] * 3)), [lookup], guard=LoopGuard(max_repeats=1)
    )
    loop_result = await looping.run("?")

    assert loop_result.stop_reason == "loop_guard"
    assert loop_result.turns == 3
