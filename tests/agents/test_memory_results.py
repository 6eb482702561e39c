"""``AgentContext.memory_results``: memory fetched before a run reaches the model with the
system prompt, whatever the strategy (scripted model capturing the requests)."""

from __future__ import annotations

import json
from pathlib import Path

from agentloom.agents import AgentContext, CodeActAgent, OrchestratorAgent, SimpleAgent
from agentloom.agents.base import MEMORY_HEAD, MemoryResult, memory_section
from agentloom.agents.operative import OperativeAgent
from agentloom.agents.sandbox_policy import SandboxSpec
from agentloom.agents.sandboxed import SandboxedAgent
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tools.calculator import CalculatorTool
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM, Message
from tests.agents.code_agents import LIMITS, sandbox, scripted, texts
from tests.agents.test_sandbox_channel import ScriptRunner

MEMORY = (
    MemoryResult("The user's name is Ada.", source="profile", score=0.91),
    "Ada prefers answers in French.",
    "   ",  # blank: left out
)
SECTION = (
    f"{MEMORY_HEAD}\n[1] (profile; score 0.91) The user's name is Ada.\n"
    "[2] Ada prefers answers in French."
)


def test_the_section_numbers_the_results_and_says_where_they_come_from() -> None:
    assert memory_section(MEMORY) == SECTION
    assert memory_section([]) is None
    assert memory_section([" "]) is None
    assert MemoryResult("x", source="notes.md").line(3) == "[3] (notes.md) x"


async def test_memory_follows_the_instructions_in_the_system_prompt() -> None:
    llm, model = scripted("Bonjour Ada.")
    agent = OrchestratorAgent(llm, [CalculatorTool()], instructions="Be brief.")

    result = await agent.run("Who am I?", AgentContext(memory_results=MEMORY))

    (request,) = model.requests
    assert texts(request) == [f"Be brief.\n\n{SECTION}", "Who am I?"]
    assert result.content == "Bonjour Ada."


async def test_without_instructions_the_memory_is_the_system_prompt() -> None:
    llm, model = scripted("Ada.", "Who?")

    await SimpleAgent(llm).run("Who am I?", AgentContext(memory_results=MEMORY))
    await SimpleAgent(llm).run([Message.user("Who am I?")], AgentContext())

    with_memory, without = model.requests
    assert texts(with_memory) == [SECTION, "Who am I?"]
    assert texts(without) == ["Who am I?"]


async def test_codeact_shows_the_memory_after_its_own_prompt() -> None:
    llm, model = scripted("Ada.")
    agent = CodeActAgent(llm, sandbox=sandbox(), limits=LIMITS)

    await agent.run("Who am I?", AgentContext(memory_results=MEMORY))

    system = texts(model.requests[0])[0]
    assert system.startswith("You are a helpful assistant who solves tasks with Python.")
    assert system.endswith(f"\n\n{SECTION}")


async def test_an_operative_shows_the_memory_each_tick_but_never_saves_it(tmp_path: Path) -> None:
    store = SessionStore.in_dir(tmp_path)
    model = ScriptedModel(["Noted.", "Still noted."])
    agent = OperativeAgent(LLM("m", provider=model), store=store, task="Watch.")

    await agent.run("First.", AgentContext(memory_results=MEMORY))
    await agent.run("Second.", AgentContext())

    first, second = model.requests
    assert texts(first)[0].endswith(f"\n\n{SECTION}")
    assert MEMORY_HEAD not in "".join(texts(second))  # not carried over in the history
    saved = await store.load("operative", "default")
    assert MEMORY_HEAD not in json.dumps([m.content for m in saved.history])
    await agent.aclose()
    await store.aclose()


async def test_a_sandboxed_agent_sends_the_memory_to_its_child() -> None:
    script = """
finished = {"type": "agent_finished", "result": {"content": json.dumps(start), "turns": 1}}
send({"op": "event", "event": finished})
"""
    llm = LLM("m", provider=ScriptedModel())
    agent = SandboxedAgent(llm, SandboxSpec(), runner=ScriptRunner(script))

    result = await agent.run("Who am I?", AgentContext(memory_results=MEMORY))

    sent = json.loads(result.content)["payload"]["memory_results"]
    assert sent == [
        {"content": "The user's name is Ada.", "source": "profile", "score": 0.91},
        {"content": "Ada prefers answers in French.", "source": None, "score": None},
        {"content": "   ", "source": None, "score": None},
    ]
