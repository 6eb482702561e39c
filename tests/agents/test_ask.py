"""``agentloom.ask`` / ``ask_full`` against a fake backend over HTTP, and how the connection is
resolved (arguments > environment > config file > a local agentloom server)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

import agentloom
from agentloom.agents.builders import UnknownNameError
from agentloom.agents.connection import (
    DEFAULT_BASE_URL,
    Connection,
    ConnectionSettingsError,
    open_agent,
    resolve_connection,
)
from agentloom.agents.tools.base import function_tool
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend

ENVIRONMENT = (
    "AGENTLOOM_BASE_URL",
    "AGENTLOOM_API_KEY",
    "AGENTLOOM_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
)


@pytest.fixture(autouse=True)
def _no_connection_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "agentloom.toml"
    path.write_text(
        "[[providers]]\n"
        'name = "vllm"\n'
        'base_url = "http://gpu.example:8000/v1"\n'
        'api_key_env = "VLLM_KEY"\n'
        'models = ["qwen3", "llama"]\n'
        "[[providers]]\n"
        'name = "other"\n'
        'base_url = "http://other.example/v1"\n'
        'models = ["other-model"]\n'
    )
    return path


# --- resolution --------------------------------------------------------------------------------


def test_explicit_arguments_win(config: Path) -> None:
    env = {"AGENTLOOM_BASE_URL": "http://env/v1", "AGENTLOOM_MODEL": "env-model"}

    connection = resolve_connection(
        model="m",
        base_url="http://given/v1/",
        api_key="k",
        path="completions",
        config=config,
        env=env,
    )

    assert connection == Connection("http://given/v1", "m", "k", "completions")


def test_the_environment_comes_before_the_config_file(config: Path) -> None:
    env = {
        "AGENTLOOM_BASE_URL": "http://env/v1",
        "AGENTLOOM_MODEL": "env-model",
        "OPENAI_BASE_URL": "http://openai-env/v1",
        "OPENAI_API_KEY": "sk-openai",
        "VLLM_KEY": "vllm-secret",
    }

    connection = resolve_connection(config=config, env=env)

    assert (connection.base_url, connection.model, connection.api_key) == (
        "http://env/v1",
        "env-model",
        "sk-openai",
    )
    assert connection.path is None


def test_openai_variables_are_the_fallback() -> None:
    env = {"OPENAI_BASE_URL": "http://openai-env/v1", "AGENTLOOM_API_KEY": "al-key"}

    connection = resolve_connection(model="m", env=env)

    assert (connection.base_url, connection.api_key) == ("http://openai-env/v1", "al-key")


def test_the_config_files_first_provider(config: Path) -> None:
    connection = resolve_connection(config=config, env={"VLLM_KEY": "vllm-secret"})

    assert (connection.base_url, connection.model, connection.api_key) == (
        "http://gpu.example:8000/v1",
        "qwen3",
        "vllm-secret",
    )
    assert connection.settings.providers[1].name == "other"
    assert "vllm-secret" not in repr(connection)


def test_the_config_files_key_only_goes_to_its_own_base_url(config: Path) -> None:
    connection = resolve_connection(
        base_url="http://elsewhere/v1", config=config, env={"VLLM_KEY": "vllm-secret"}
    )

    assert connection.api_key is None
    assert connection.model == "qwen3"


def test_the_default_is_a_local_agentloom_server_over_responses() -> None:
    connection = resolve_connection(model="m", env={})

    assert connection.base_url == DEFAULT_BASE_URL == "http://127.0.0.1:8321/v1"
    assert connection.path == "responses"
    assert resolve_connection(model="m", path="completions", env={}).path == "completions"


def test_no_model_anywhere_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text('[[providers]]\nname = "x"\nbase_url = "http://x/v1"\n')

    with pytest.raises(ConnectionSettingsError, match=r"no model given.*AGENTLOOM_MODEL"):
        resolve_connection(config=empty, env={"AGENTLOOM_MODEL": ""})


# --- ask ---------------------------------------------------------------------------------------


def test_ask_runs_the_orchestrator_with_a_named_tool(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("calculator", {"expression": "17 * 23"}))
    scripted.add_turn("17 * 23 = 391.")

    answer = agentloom.ask(
        "What is 17 * 23?", tools=["calculator"], model=backend.model, base_url=backend.base_url
    )

    assert answer == "17 * 23 = 391."
    tool_message = backend.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "391"


def test_ask_full_reads_the_environment_and_takes_tool_instances(
    backend: FakeBackend, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    @function_tool
    def shout(word: str) -> str:
        """Upper-case a word."""
        return word.upper()

    monkeypatch.setenv("AGENTLOOM_BASE_URL", backend.base_url)
    monkeypatch.setenv("AGENTLOOM_MODEL", backend.model)
    scripted.add_turn(tool_call("shout", {"word": "loom"}))
    scripted.add_turn("LOOM!")

    result = agentloom.ask_full("Shout loom.", tools=[shout], instructions="Be loud.")

    assert result.content == "LOOM!"
    assert [(o.name, o.output) for o in result.tool_results] == [("shout", "LOOM")]
    assert result.turns == 2
    assert result.stop_reason == "final"
    assert backend.requests[0]["messages"][0] == {"role": "system", "content": "Be loud."}


def test_ask_refuses_to_run_inside_an_event_loop() -> None:
    async def inside() -> None:
        agentloom.ask("Hi", model="m")

    with pytest.raises(RuntimeError, match=r"await agentloom\.ask_async"):
        asyncio.run(inside())


async def test_ask_async_inside_an_event_loop(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello from the loop.")

    answer = await agentloom.ask_async(
        "Hi", agent="simple", model=backend.model, base_url=backend.base_url
    )

    assert answer == "Hello from the loop."


async def test_unknown_names_are_refused_and_built_tools_closed() -> None:
    connection = Connection("http://127.0.0.1:9/v1", "m")

    with pytest.raises(UnknownNameError, match="unknown agent 'nope'"):
        async with open_agent(connection, "nope", ["calculator"]):
            pass
    with pytest.raises(UnknownNameError, match="unknown tool"):
        async with open_agent(connection, "orchestrator", ["abacus"]):
            pass


def test_import_agentloom_stays_cheap() -> None:
    code = (
        "import sys, agentloom; "
        "assert 'openai' not in sys.modules and 'agentloom.quick' not in sys.modules; "
        "assert callable(agentloom.ask) and 'agentloom.quick' in sys.modules"
    )

    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
