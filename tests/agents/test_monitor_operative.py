"""The monitor operative over several ticks: the four axes together, their state surviving a
fresh agent on the same session store (SQLite and PostgreSQL), failures, and the registry and
CLI listing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentloom.agents import AGENTS, AgentContext, build_agent
from agentloom.agents.builders import AgentOptions
from agentloom.agents.monitor import MONITOR_INSTRUCTIONS, MonitorOperativeAgent, MonitorStrategies
from agentloom.agents.monitor.compression import SUMMARY_INSTRUCTIONS
from agentloom.agents.monitor.decomposition import PLAN_KEY, PLANNING_INSTRUCTIONS
from agentloom.agents.monitor.hierarchy import HIERARCHY_INSTRUCTIONS
from agentloom.agents.monitor.memory import (
    CAUSALITY_INSTRUCTIONS,
    SCRATCHPAD_INSTRUCTIONS,
    STRUCTURED_INSTRUCTIONS,
)
from agentloom.agents.monitor.retrieval import SELF_EVAL_INSTRUCTIONS
from agentloom.agents.operative import LAST_RESULT
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tools.base import Tool, function_tool
from agentloom.cli.main import main
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn, raise_error, tool_call
from agentloom.llm import LLM

TASK = "Watch the shop's checkout errors and find their cause."
LOG = "02:00 backup started\n" + "02:13 ERROR write failed: no space left on /var\n" * 60
GRAPH = "monitor.causality_graph"
SIMPLE = MonitorStrategies("notes", "truncate", "recent", "single")


@function_tool
def read_log() -> str:
    """Read the shop's error log."""
    return LOG


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[SessionStore]:
    """The session store, on SQLite and on PostgreSQL."""
    opened = SessionStore.at(database_url)
    yield opened
    await opened.aclose()


@pytest.fixture
async def make(store: SessionStore) -> AsyncIterator[Any]:
    """Builds a monitor on the shared store with a scripted model; closes them all after."""
    made: list[MonitorOperativeAgent] = []

    def build(*turns: Turn, **options: Any) -> tuple[MonitorOperativeAgent, ScriptedModel]:
        model = ScriptedModel(list(turns))
        tools: list[Tool] = options.pop("tools", [read_log])
        options.setdefault("task", TASK)
        agent = MonitorOperativeAgent(LLM("m", provider=model), tools, store=store, **options)
        made.append(agent)
        return agent, model

    yield build
    for agent in made:
        await agent.aclose()


def _text(request: ChatRequest, at: int) -> str:
    content = request.messages[at].content
    assert isinstance(content, str)
    return content


def _system(request: ChatRequest) -> str:
    return _text(request, 0)


def _tools(request: ChatRequest) -> list[str]:
    return [spec.name for spec in request.tools]


PLAN = json.dumps(
    [
        {"title": "Collect the errors", "done_when": "the error log is read"},
        {"title": "Find the cause of the write failures", "done_when": "a cause is named"},
    ]
)
LINKS = json.dumps(
    [
        {"cause": "nightly backup", "effect": "disk full", "confidence": 0.8},
        {"cause": "disk full", "effect": "failed checkout writes", "confidence": 0.9},
    ]
)
SUMMARY = "The 02:00 backup filled /var; from 02:13 every write fails (no space left)."
ASKED = "Do the checkout writes still fail? Look at the backup too."
REPORT = "Collected the errors: checkout writes fail since 02:13 because /var is full."


async def test_the_four_axes_over_ticks_and_across_a_fresh_agent(
    make: Any, store: SessionStore
) -> None:
    first, model = make(
        PLAN,  # phased: the plan, on the session's first tick (nothing to recall yet)
        [tool_call("read_log")],
        SUMMARY,  # summarize: the long observation
        [tool_call("finish_phase", {"summary": "Errors collected."})],
        REPORT,
        LINKS,  # causality_graph: the links of the tick
    )

    result = await first.tick()

    planning, loop, summarising, after_log, _, extracting = model.requests
    assert _system(planning) == PLANNING_INSTRUCTIONS
    assert _text(planning, 1) == f"The task:\n{TASK}"
    system = _system(loop)
    assert system.startswith(MONITOR_INSTRUCTIONS)
    assert f"Your task:\n{TASK}" in system
    assert "Your plan (phase 1 of 2 is current):\n1. [current] Collect the errors" in system
    assert "What you recall" not in system
    assert _tools(loop) == ["read_log", "finish_phase", "remember"]
    assert _system(summarising) == SUMMARY_INSTRUCTIONS
    observation = _text(after_log, -1)
    assert observation == f"[summary of {len(LOG)} characters of output]\n{SUMMARY}"
    assert _system(extracting) == CAUSALITY_INSTRUCTIONS
    record = _text(extracting, 1)
    assert f"[read_log] [summary of {len(LOG)} characters" in record
    assert "finish_phase" not in record
    assert record.endswith(f"Report:\n{REPORT}")
    assert result.content == REPORT
    assert result.usage.model_calls == 6
    assert result.metadata["recalled"] == 0
    assert result.metadata["strategies"] == MonitorStrategies().as_json()
    state = (await store.load("monitor_operative", "default")).state
    assert state[PLAN_KEY] == {
        "phases": [
            {
                "title": "Collect the errors",
                "done_when": "the error log is read",
                "summary": "Errors collected.",
            },
            {
                "title": "Find the cause of the write failures",
                "done_when": "a cause is named",
                "summary": None,
            },
        ],
        "current": 1,
    }
    assert len(state[GRAPH]["edges"]) == 2

    # A fresh agent (a new process, say) on the same store carries on.
    second, model = make(
        "[2]",  # hybrid_with_self_eval: the judge keeps the second candidate
        "The backup is still filling /var; the cause is the nightly backup.",
        "[]",
    )

    await second.tick(ASKED)

    judging, loop, extracting = model.requests
    assert _system(judging) == SELF_EVAL_INSTRUCTIONS
    work = _text(judging, 1)
    assert work.startswith(f"The work at hand:\n{ASKED}\nFind the cause of the write failures\n\n")
    assert "1. disk full -> failed checkout writes (confidence 0.9; tick 1)" in work
    assert "2. nightly backup -> disk full (confidence 0.8; tick 1)" in work
    system = _system(loop)
    assert "Your plan (phase 2 of 2 is current):\n1. [done] Collect the errors: Errors" in system
    assert (
        "What you recall from earlier ticks (chosen for this tick):\n"
        "- nightly backup -> disk full (confidence 0.8; tick 1)"
    ) in system
    assert "failed checkout writes" not in system  # judged irrelevant
    assert f'"{LAST_RESULT}": "{REPORT}"' in system
    assert "monitor." not in system  # the axes' state is shown in sections of its own
    assert [m.role for m in loop.messages[1:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert _system(extracting) == CAUSALITY_INSTRUCTIONS
    ticks = await store.ticks("monitor_operative", "default")
    assert [(t.number, t.status) for t in ticks] == [(1, "ok"), (2, "ok")]


async def test_the_simpler_choices_make_no_side_calls(make: Any, store: SessionStore) -> None:
    first, model = make([tool_call("read_log")], "Disk full.", strategies=SIMPLE)

    result = await first.tick()

    loop, last = model.requests
    assert _tools(loop) == ["read_log", "remember"]
    assert "Your plan" not in _system(loop)
    assert _text(last, -1).endswith(f"\n... [{len(LOG) - 2000} more characters cut]")
    assert result.usage.model_calls == 2
    state = (await store.load("monitor_operative", "default")).state
    assert state["monitor.notes"] == [{"tick": 1, "text": "Disk full."}]
    assert PLAN_KEY not in state

    second, model = make("Still full.", strategies=SIMPLE)
    await second.tick("Any change?")

    (loop,) = model.requests
    system = _system(loop)
    assert "What you recall from earlier ticks (chosen for this tick):\n- Disk full. (tick 1)" in (
        system
    )
    assert _text(loop, -1).endswith("): Any change?")


async def test_a_failing_extraction_fails_the_tick_and_saves_no_history(
    make: Any, store: SessionStore
) -> None:
    agent, _ = make(
        PLAN,
        "Nothing new in the checkout errors today, everything looks calm and quiet.",
        [raise_error(UpstreamError("the backend fell over", status=503))],
    )

    with pytest.raises(UpstreamError):
        await agent.tick()

    saved = await store.load("monitor_operative", "default")
    assert saved.history == ()
    assert GRAPH not in saved.state
    assert PLAN_KEY in saved.state  # the plan was made before the loop ran
    (tick,) = await store.ticks("monitor_operative", "default")
    assert tick.status == "error"
    assert "the backend fell over" in tick.summary


async def test_the_registry_builds_it_with_the_strategies_given(tmp_path: Path) -> None:
    model = ScriptedModel(["On it."])
    options = AgentOptions(data_dir=tmp_path, strategies=SIMPLE.as_json())
    agent = build_agent("monitor_operative", LLM("m", provider=model), (), options)

    result = await agent.run("Watch the queue.", AgentContext(session_id="ops"))

    assert isinstance(agent, MonitorOperativeAgent)
    assert agent.strategies == SIMPLE
    assert result.content == "On it."
    store = SessionStore.in_dir(tmp_path)
    saved = await store.load("monitor_operative", "ops")
    assert saved.state == {LAST_RESULT: "On it.", "monitor.notes": [{"tick": 1, "text": "On it."}]}
    await store.aclose()
    await agent.aclose()


def test_the_registry_refuses_a_bad_choice(tmp_path: Path) -> None:
    options = AgentOptions(data_dir=tmp_path, strategies={"task_decomposition": "waterfall"})

    with pytest.raises(
        InvalidRequestError, match="known: phased, monolithic, hierarchical, single"
    ) as caught:
        build_agent("monitor_operative", LLM("m", provider=ScriptedModel()), (), options)

    assert caught.value.param == "task_decomposition"


def test_agentloom_agents_lists_it() -> None:
    listed = CliRunner().invoke(main, ["agents"])

    assert listed.exit_code == 0
    assert f"monitor_operative  {AGENTS['monitor_operative'].description}" in listed.output


# --- the seed's other values, each seen in what reaches the model ----------------------------

LONG_REPORT = "The nightly backup fills /var at 02:00; checkout writes fail from 02:13 on."


def _plain(**chosen: str) -> MonitorStrategies:
    """No side call but the axis under test's."""
    base = {"memory_extraction": "notes", "observation_compression": "none"}
    base |= {"retrieval_strategy": "recent", "task_decomposition": "monolithic"}
    return MonitorStrategies(**(base | chosen))


@pytest.mark.parametrize(
    ("memory", "reply", "instructions", "recalled"),
    [
        (
            "scratchpad",
            "- backup at 02:00 fills /var\n- checkout writes fail from 02:13",
            SCRATCHPAD_INSTRUCTIONS,
            "- checkout writes fail from 02:13 (scratchpad, tick 1)\n"  # recent: last line first
            "- backup at 02:00 fills /var (scratchpad, tick 1)",
        ),
        (
            "structured_json",
            '{"cause": "nightly backup", "disk_free_gb": 0}',
            STRUCTURED_INSTRUCTIONS,
            '- disk_free_gb: 0 (tick 1)\n- cause: "nightly backup" (tick 1)',
        ),
    ],
)
async def test_an_extracted_memory_is_recalled_in_the_next_ticks_prompt(
    make: Any, store: SessionStore, memory: str, reply: str, instructions: str, recalled: str
) -> None:
    first, model = make(LONG_REPORT, reply, strategies=_plain(memory_extraction=memory))
    await first.tick()

    loop, extracting = model.requests
    assert _system(extracting) == instructions
    assert _text(extracting, 1).endswith(f"Report:\n{LONG_REPORT}")
    assert "What you recall" not in _system(loop)

    second, model = make("Still full.", "", strategies=_plain(memory_extraction=memory))
    await second.tick("Any change?")

    assert f"What you recall from earlier ticks (chosen for this tick):\n{recalled}" in _system(
        model.requests[0]
    )


async def test_no_memory_extraction_leaves_the_next_tick_nothing_to_recall(
    make: Any, store: SessionStore
) -> None:
    first, model = make(LONG_REPORT, strategies=_plain(memory_extraction="none"))
    await first.tick()
    second, later = make("Still full.", strategies=_plain(memory_extraction="none"))
    await second.tick("Any change?")

    assert len(model.requests) == 1  # the loop; no extraction call
    assert "What you recall" not in _system(later.requests[0])
    state = (await store.load("monitor_operative", "default")).state
    assert not [key for key in state if key.startswith("monitor.")]


@pytest.mark.parametrize(
    ("retrieval", "shown"),
    [("semantic", "- The automobile's battery is dead. (tick 1)"), ("none", None)],
)
async def test_semantic_recalls_by_meaning_and_none_recalls_nothing(
    make: Any, retrieval: str, shown: str | None
) -> None:
    strategies = _plain(retrieval_strategy=retrieval)
    for report in ("The automobile's battery is dead.", "The invoice was paid twice."):
        agent, _ = make(report, strategies=strategies)
        await agent.tick("Look around.")

    agent, model = make("Charging it.", strategies=strategies)
    await agent.tick("Why won't my car start?")

    (loop,) = model.requests
    system = _system(loop)
    if shown is None:
        assert "What you recall" not in system
    else:
        recall = system.split("What you recall from earlier ticks (chosen for this tick):\n")[1]
        assert recall == shown  # not the invoice


async def test_hierarchical_plans_phases_and_steps_and_the_model_walks_them(
    make: Any, store: SessionStore
) -> None:
    plan = json.dumps(
        [
            {"title": "Collect the errors", "steps": ["Read the log", "Count the failures"]},
            {"title": "Find the cause", "steps": ["Check the backup"]},
        ]
    )
    strategies = _plain(task_decomposition="hierarchical")
    agent, model = make(
        plan,
        [tool_call("finish_step", {"summary": "Read it."})],
        "Log read.",
        strategies=strategies,
    )

    await agent.tick()

    planning, loop, after = model.requests
    assert _system(planning) == HIERARCHY_INSTRUCTIONS
    assert _text(planning, 1) == f"The task:\n{TASK}"
    assert (
        "Your plan (phase 1 of 2, step 1 of 2 is current):\n"
        "1. [current] Collect the errors\n"
        "   1.1 [current] Read the log\n"
        "   1.2 [next] Count the failures\n"
        "2. [next] Find the cause\n"
        "   2.1 [next] Check the backup\n"
    ) in _system(loop)
    assert _tools(loop) == ["read_log", "finish_step", "remember"]
    assert _text(after, -1) == (
        "Step 1.1 is done. Now phase 1 of 2, step 2 of 2: Collect the errors / Count the failures."
    )

    second, model = make("Counting.", strategies=strategies)
    await second.tick()

    (loop,) = model.requests  # planned once
    assert "   1.1 [done] Read the log: Read it.\n   1.2 [current] Count the failures" in (
        _system(loop)
    )


async def test_monolithic_sends_the_whole_task_with_no_plan(make: Any) -> None:
    agent, model = make("Looked.", strategies=_plain(task_decomposition="monolithic"))

    await agent.tick()

    (loop,) = model.requests
    assert "Your plan" not in _system(loop)
    assert f"Your task:\n{TASK}" in _system(loop)
    assert _tools(loop) == ["read_log", "remember"]


async def test_the_axes_may_be_given_as_keywords_as_the_seed_does(tmp_path: Path) -> None:
    store = SessionStore.in_dir(tmp_path)
    llm = LLM("m", provider=ScriptedModel())
    agent = MonitorOperativeAgent(
        llm,
        [read_log],
        store=store,
        memory_extraction="scratchpad",
        observation_compression="summarize",
        retrieval_strategy="semantic",
        task_decomposition="hierarchical",
    )

    assert agent.strategies == MonitorStrategies(
        "scratchpad", "summarize", "semantic", "hierarchical"
    )
    with pytest.raises(InvalidRequestError, match="unknown strategy axis 'memory'"):
        MonitorOperativeAgent(llm, store=store, memory="notes")
    with pytest.raises(InvalidRequestError, match="not both"):
        MonitorOperativeAgent(llm, store=store, strategies=SIMPLE, memory_extraction="none")
    await agent.aclose()
    await store.aclose()
