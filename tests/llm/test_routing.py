"""Routing: an explicit override wins, then the capability table, then Chat Completions."""

from __future__ import annotations

import pytest

from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import CAPABILITIES, LLM, LLMStateError, Message, choose_path


@pytest.mark.parametrize(
    "model",
    ["gpt-5", "GPT-5-mini", "openai/gpt-5.1", "o3-mini", "o4-mini", "codex-mini-latest"],
)
def test_the_table_sends_responses_models_to_responses(model: str) -> None:
    assert choose_path(model) == "responses"


@pytest.mark.parametrize("model", ["llama-3.1-8b", "qwen3:4b", "mistral-large", "gpt-3.5-turbo"])
def test_other_models_use_chat_completions(model: str) -> None:
    assert choose_path(model) == "completions"


def test_an_explicit_override_wins_over_the_table() -> None:
    assert choose_path("gpt-5", "completions") == "completions"
    assert choose_path("llama-3", "responses") == "responses"
    assert LLM("gpt-5", path="completions").path == "completions"
    assert LLM("llama-3", path="responses").path == "responses"


def test_a_table_of_ones_own() -> None:
    table = {"my-*": "responses"} | dict(CAPABILITIES)

    assert LLM("my-model", capabilities=table).path == "responses"
    assert LLM("gpt-5", capabilities={}).path == "completions"


def test_with_model_routes_again() -> None:
    llm = LLM("gpt-5", base_url="http://127.0.0.1:9/v1")

    assert llm.path == "responses"
    assert llm.with_model("llama-3").path == "completions"
    assert llm.with_model("llama-3", path="responses").path == "responses"
    assert llm.path == "responses"  # the original is unchanged


async def test_an_in_process_provider_speaks_chat_completions() -> None:
    llm = LLM("gpt-5", provider=ScriptedModel(["Hi!"]))

    assert llm.path == "completions"
    assert (await llm.chat([Message.user("Hi")])).text == "Hi!"


def test_an_in_process_provider_cannot_be_forced_onto_responses() -> None:
    llm = LLM("gpt-5", provider=ScriptedModel(), path="responses")

    with pytest.raises(LLMStateError, match="base_url"):
        llm.stream([Message.user("Hi")])
