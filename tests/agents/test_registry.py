"""Registering agents and tools: decorators adding to the one table, and installed packages'
entry points read lazily (a real distribution on ``sys.path``, made by the test)."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentloom.agents import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    AgentInput,
    AgentResult,
    BaseAgent,
    OrchestratorAgent,
    PluginError,
    ToolEnvironment,
    ToolUsingAgent,
    build_agent,
    build_tools,
    builders,
    function_tool,
    register_agent,
    register_tool,
    registry,
)
from agentloom.agents.builders import AgentOptions
from agentloom.agents.registry import AgentRegistry, ToolRegistry, discover_plugins
from agentloom.agents.tools.base import Tool
from agentloom.cli.main import main
from agentloom.errors import InvalidRequestError
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.json_types import JSONObject
from agentloom.llm import LLM


@pytest.fixture(autouse=True)
def tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test's registrations are undone after it; entry points are read afresh."""
    agents, tools = dict(builders.AGENTS), dict(builders.TOOLS)
    monkeypatch.setattr(registry, "_discovered", False)
    monkeypatch.setattr(registry, "_added", set())
    yield
    builders.AGENTS.clear()
    builders.AGENTS.update(agents)
    builders.TOOLS.clear()
    builders.TOOLS.update(tools)


def _llm(*turns: Any) -> tuple[LLM, ScriptedModel]:
    model = ScriptedModel(list(turns))
    return LLM("m", provider=model), model


# --- decorators ------------------------------------------------------------------------------


async def test_a_decorated_tool_using_agent_is_built_with_the_tools_and_options() -> None:
    @register_agent("loud")
    class LoudAgent(OrchestratorAgent):
        description = "The orchestrator, shouting"

        async def stream(
            self, input: AgentInput, context: AgentContext | None = None
        ) -> AsyncGenerator[AgentEvent, None]:
            async for event in super().stream(input, context):
                if isinstance(event, AgentFinished):
                    result = event.result
                    event = AgentFinished(AgentResult(result.content.upper(), turns=result.turns))
                yield event

    @register_tool()
    @function_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    llm, model = _llm([tool_call("add", {"a": 2, "b": 3})], "five")
    environment = ToolEnvironment()
    agent = build_agent("loud", llm, build_tools(["add"], environment), AgentOptions(max_turns=4))

    result = await agent.run("2 + 3?")

    assert isinstance(agent, LoudAgent)
    assert isinstance(agent, ToolUsingAgent)
    assert agent.max_turns == 4
    assert result.content == "FIVE"
    assert [spec.name for spec in model.requests[0].tools] == ["add"]
    assert builders.AGENTS["loud"].description == "The orchestrator, shouting"
    assert builders.TOOLS["add"].description == "Add two numbers."


async def test_a_toolless_agent_class_and_a_builder_function() -> None:
    @register_agent("parrot", "Repeats the input")
    class Parrot(BaseAgent):
        async def stream(
            self, input: AgentInput, context: AgentContext | None = None
        ) -> AsyncGenerator[AgentEvent, None]:
            said = input if isinstance(input, str) else ""
            yield AgentFinished(AgentResult(f"{self.instructions or ''}{said}"))

    @register_agent("parrot_builder")
    def build(llm: LLM, tools: Any, options: AgentOptions) -> BaseAgent:
        """A parrot that says hello first."""
        return Parrot(llm, instructions="hello ")

    llm, _ = _llm()

    assert (await build_agent("parrot", llm).run("polly")).content == "polly"
    assert (await build_agent("parrot_builder", llm).run("polly")).content == "hello polly"
    assert builders.AGENTS["parrot_builder"].description == "A parrot that says hello first."
    with pytest.raises(InvalidRequestError, match="the parrot agent uses no tools"):
        build_agent("parrot", llm, build_tools(["calculator"], ToolEnvironment()))


async def test_tool_classes_and_plain_functions_register_too() -> None:
    @register_tool("stamp")
    class Stamp(Tool):
        name = "stamp"
        description = "Stamp a word."
        parameters: JSONObject = {"type": "object", "properties": {"word": {"type": "string"}}}

        async def call(self, arguments: JSONObject, context: AgentContext) -> str:
            return f"[{arguments['word']}]"

    @register_tool()
    def shout(word: str) -> str:
        """Upper-case a word."""
        return word.upper()

    stamp, shouted = build_tools(["stamp", "shout"], ToolEnvironment())

    assert await stamp.call({"word": "ok"}, AgentContext()) == "[ok]"
    assert await shouted.call({"word": "ok"}, AgentContext()) == "OK"
    assert shout("still a function") == "STILL A FUNCTION"  # returned unchanged


def test_a_taken_name_is_refused_unless_replaced() -> None:
    with pytest.raises(ValueError, match="the agent name 'orchestrator' is taken"):
        register_agent("orchestrator")(OrchestratorAgent)
    with pytest.raises(ValueError, match="the tool name 'calculator' is taken"):
        register_tool("calculator")(lambda: "x")
    with pytest.raises(TypeError, match="is not a BaseAgent subclass"):
        register_agent("text")(str)

    register_agent("orchestrator", "Mine", replace=True)(OrchestratorAgent)
    assert builders.AGENTS["orchestrator"].description == "Mine"


def test_the_seeds_registry_sample_runs() -> None:
    # Adapted from the seed: `from openjarvis.core.registry import AgentRegistry`.
    AgentRegistry.contains("orchestrator")  # True
    agent_cls = AgentRegistry.get("orchestrator")
    keys = AgentRegistry.keys()

    assert AgentRegistry.contains("orchestrator")
    assert agent_cls is builders.AGENTS["orchestrator"]
    seed = ["simple", "orchestrator", "native_react", "react", "native_openhands", "rlm"]
    seed += ["openhands", "claude_code", "operative", "monitor_operative"]
    assert set(seed) <= set(keys)

    @AgentRegistry.register("seeded")
    class Seeded(OrchestratorAgent):
        pass

    @ToolRegistry.register("echo_tool")
    def echo_tool(text: str) -> str:
        """Echo."""
        return text

    assert AgentRegistry.contains("seeded")
    assert ToolRegistry.contains("echo_tool")
    assert ToolRegistry.get("calculator") is builders.TOOLS["calculator"]


def test_agentloom_agents_and_tools_list_the_registered_ones() -> None:
    @register_agent("listed_agent", "An agent of the test's")
    class Listed(OrchestratorAgent):
        pass

    @register_tool("listed_tool", "A tool of the test's")
    def listed_tool() -> str:
        return "x"

    agents = CliRunner().invoke(main, ["agents"])
    tools = CliRunner().invoke(main, ["tools"])

    assert re.search(r"^listed_agent +An agent of the test's$", agents.output, re.MULTILINE)
    assert "listed_tool" in tools.output
    assert "A tool of the test's" in tools.output


# --- entry points ----------------------------------------------------------------------------

PLUGIN = '''
from agentloom.agents import OrchestratorAgent, function_tool


class PluggedAgent(OrchestratorAgent):
    description = "An orchestrator from a package"


@function_tool
def plugged_tool(word: str) -> str:
    """Reverse a word."""
    return word[::-1]


NOT_AN_AGENT = 42
'''


def _install(root: Path, name: str, entry_points: str, module: str | None = None) -> None:
    """A distribution ``name`` 0.1 on ``root`` (a ``sys.path`` entry) with ``entry_points``."""
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    if module is not None:
        (root / "loom_plugin_test.py").write_text(module)


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("loom_plugin_test", None)


async def test_an_installed_packages_agent_and_tool_are_found_when_asked_for(
    plugins: Path,
) -> None:
    _install(
        plugins,
        "loom-plugin",
        "[agentloom.agents]\nplugged = loom_plugin_test:PluggedAgent\n"
        "[agentloom.tools]\nreverse = loom_plugin_test:plugged_tool\n",
        PLUGIN,
    )
    llm, _ = _llm([tool_call("plugged_tool", {"word": "loom"})], "mool it is")

    tools = build_tools(["reverse"], ToolEnvironment())  # the first look-up reads the group
    assert "loom_plugin_test" in sys.modules  # built, so loaded
    agent = build_agent("plugged", llm, tools)
    result = await agent.run("Reverse loom.")

    assert type(agent).__name__ == "PluggedAgent"
    assert result.content == "mool it is"
    assert result.tool_results[0].output == "mool"
    assert builders.AGENTS["plugged"].description == "From the package loom-plugin 0.1"


def test_entry_points_are_read_lazily_and_loaded_when_built(plugins: Path) -> None:
    _install(
        plugins,
        "loom-plugin",
        "[agentloom.agents]\nplugged = loom_plugin_test:PluggedAgent\n",
        PLUGIN,
    )

    assert "plugged" not in builders.AGENTS  # nothing read at import
    discover_plugins()

    assert "plugged" in builders.AGENTS
    assert "loom_plugin_test" not in sys.modules  # listed, not imported


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("missing_module_xyz:Agent", "ModuleNotFoundError: No module named 'missing_module_xyz'"),
        ("loom_plugin_test:NOT_AN_AGENT", "TypeError: agent 'broken': give a BaseAgent"),
    ],
)
def test_a_broken_entry_point_names_its_package(plugins: Path, entry: str, why: str) -> None:
    _install(plugins, "broken-plugin", f"[agentloom.agents]\nbroken = {entry}\n", PLUGIN)
    llm, _ = _llm()

    with pytest.raises(PluginError) as caught:
        build_agent("broken", llm)

    message = caught.value.message
    assert message.startswith("the agent 'broken' of package broken-plugin 0.1 (entry point ")
    assert f"agentloom.agents: broken = {entry}) cannot be used: {why}" in message


def test_an_entry_point_never_replaces_a_name_in_the_table(
    plugins: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _install(
        plugins,
        "greedy-plugin",
        "[agentloom.agents]\norchestrator = loom_plugin_test:PluggedAgent\n",
        PLUGIN,
    )

    with caplog.at_level(logging.WARNING, logger="agentloom.agents.registry"):
        discover_plugins()

    assert builders.AGENTS["orchestrator"].description.startswith("Function-calling loop")
    assert "the agent 'orchestrator' of package greedy-plugin 0.1 is not added" in caplog.text
