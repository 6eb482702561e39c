"""The monitor operative's four strategy axes, each choice on its own, against the scripted
model (what each sends the model, what it makes of the reply) and a real session store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentloom.agents.base import AgentContext, ToolOutcome
from agentloom.agents.monitor import AXES, MonitorStrategies
from agentloom.agents.monitor.compression import (
    SUMMARY_INSTRUCTIONS,
    CompressedTool,
    Keep,
    Summarize,
    Truncate,
)
from agentloom.agents.monitor.decomposition import (
    PLAN_KEY,
    PLANNING_INSTRUCTIONS,
    FinishPhaseTool,
    Phased,
    Plan,
    Single,
)
from agentloom.agents.monitor.hierarchy import (
    HIERARCHY_INSTRUCTIONS,
    HIERARCHY_KEY,
    FinishStepTool,
    Hierarchical,
    Hierarchy,
)
from agentloom.agents.monitor.memory import (
    CAUSALITY_INSTRUCTIONS,
    MAX_EDGES,
    MAX_FINDINGS,
    MAX_NOTES,
    SCRATCHPAD_INSTRUCTIONS,
    STRUCTURED_INSTRUCTIONS,
    CausalityGraph,
    MemoryEntry,
    NoMemory,
    Notes,
    Scratchpad,
    StructuredJson,
    TickTrace,
)
from agentloom.agents.monitor.retrieval import (
    SELF_EVAL_INSTRUCTIONS,
    HybridWithSelfEval,
    KeywordRetrieval,
    NoRetrieval,
    RecentRetrieval,
    SemanticRetrieval,
)
from agentloom.agents.monitor.side import SideModel, json_reply
from agentloom.agents.saved_history import SessionDataError
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tools.base import ToolError, function_tool
from agentloom.errors import InvalidRequestError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn
from agentloom.llm import LLM


def _side(*turns: Turn) -> tuple[SideModel, ScriptedModel]:
    model = ScriptedModel(list(turns))
    return SideModel(LLM("m", provider=model)), model


def _said(request: ChatRequest) -> tuple[str, str]:
    """The instructions and the content of a side call."""
    system, user = request.messages
    assert isinstance(system.content, str)
    assert isinstance(user.content, str)
    return system.content, user.content


# --- the choices -----------------------------------------------------------------------------


def test_the_defaults_are_the_long_horizon_choices() -> None:
    assert MonitorStrategies().as_json() == {
        "memory_extraction": "causality_graph",
        "observation_compression": "summarize",
        "retrieval_strategy": "hybrid_with_self_eval",
        "task_decomposition": "phased",
    }
    assert {axis: list(known) for axis, known in AXES.items()} == {
        "memory_extraction": ["causality_graph", "scratchpad", "structured_json", "none", "notes"],
        "observation_compression": ["summarize", "truncate", "none"],
        "retrieval_strategy": ["hybrid_with_self_eval", "keyword", "semantic", "none", "recent"],
        "task_decomposition": ["phased", "monolithic", "hierarchical", "single"],
    }


SEED_TABLE = {  # OpenJarvis's table of the monitor's axes, every value of it
    "memory_extraction": ["causality_graph", "scratchpad", "structured_json", "none"],
    "observation_compression": ["summarize", "truncate", "none"],
    "retrieval_strategy": ["hybrid_with_self_eval", "keyword", "semantic", "none"],
    "task_decomposition": ["phased", "monolithic", "hierarchical"],
}


@pytest.mark.parametrize(
    ("axis", "choice"),
    [(axis, choice) for axis, choices in SEED_TABLE.items() for choice in choices],
)
def test_every_value_of_the_seeds_table_is_taken(axis: str, choice: str) -> None:
    chosen = MonitorStrategies.parse({axis: choice})

    assert chosen.as_json()[axis] == choice
    built = {
        "memory_extraction": chosen.memory,
        "observation_compression": chosen.compression,
        "retrieval_strategy": chosen.retrieval,
        "task_decomposition": chosen.decomposition,
    }[axis]()
    assert built is not None


@pytest.mark.parametrize("axis", list(AXES))
def test_an_unknown_choice_names_its_axis_and_the_known_choices(axis: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        MonitorStrategies.parse({axis: "psychic"})

    assert caught.value.param == axis
    assert f"unknown {axis} 'psychic'" in caught.value.message
    assert ", ".join(AXES[axis]) in caught.value.message


def test_an_unknown_axis_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        MonitorStrategies.parse({"memory": "notes"})

    assert caught.value.param == "strategies"
    assert "unknown strategy axis 'memory'" in caught.value.message
    assert "memory_extraction, observation_compression" in caught.value.message


def test_parse_keeps_the_defaults_it_is_not_given() -> None:
    chosen = MonitorStrategies.parse({"retrieval_strategy": "recent"})

    assert chosen == MonitorStrategies(retrieval_strategy="recent")
    assert isinstance(chosen.retrieval(), RecentRetrieval)
    assert isinstance(chosen.memory(), CausalityGraph)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ('[{"a": 1}]', [{"a": 1}]),
        ("Sure!\n```json\n[1, 2]\n```\nHope it helps.", [1, 2]),
        ('Here: {"x": [3]} and more text', {"x": [3]}),
        ("No JSON here.", None),
        ("[1, 2", None),
    ],
)
def test_json_replies_are_read_forgivingly(reply: str, value: Any) -> None:
    assert json_reply(reply) == value


# --- observation_compression -----------------------------------------------------------------

LONG = "ERROR disk /var is full\n" * 200  # 4800 characters


async def test_summarize_condenses_a_long_output_with_one_model_call() -> None:
    side, model = _side("Disk /var full; every write fails.")

    kept = await Summarize().compress("read_log", LONG, side)

    assert (
        kept == f"[summary of {len(LONG)} characters of output]\nDisk /var full; every write fails."
    )
    (request,) = model.requests
    instructions, content = _said(request)
    assert instructions == SUMMARY_INSTRUCTIONS
    assert content.startswith(f"Output of the tool `read_log` ({len(LONG)} characters):")
    assert content.endswith(LONG)
    assert request.tools == ()
    assert side.usage.model_calls == 1


async def test_summarize_leaves_short_outputs_and_truncates_on_an_empty_summary() -> None:
    side, model = _side("   ")

    assert await Summarize().compress("t", "short", side) == "short"
    assert model.requests == []
    kept = await Summarize().compress("t", LONG, side)
    assert kept == LONG[:2000] + f"\n... [{len(LONG) - 2000} more characters cut]"


async def test_truncate_and_none_make_no_model_call() -> None:
    side, model = _side()

    assert await Truncate().compress("t", LONG, side) == (
        LONG[:2000] + f"\n... [{len(LONG) - 2000} more characters cut]"
    )
    assert await Truncate().compress("t", "short", side) == "short"
    assert await Keep().compress("t", LONG, side) == LONG
    assert model.requests == []


async def test_a_compressed_tool_keeps_its_spec_and_passes_errors() -> None:
    @function_tool
    def read_log(lines: int) -> str:
        """Read the log."""
        if lines < 0:
            raise ToolError("lines must not be negative")
        return "x" * 3000

    side, _ = _side()
    tool = CompressedTool(read_log, Truncate(), side)

    assert tool.spec() == read_log.spec()
    output = await tool.call({"lines": 5}, AgentContext())
    assert output.endswith("\n... [1000 more characters cut]")
    with pytest.raises(ToolError, match="negative"):
        await tool.call({"lines": -1}, AgentContext())


# --- memory_extraction -----------------------------------------------------------------------


def _trace(number: int, report: str, *outputs: str) -> TickTrace:
    seen = tuple(ToolOutcome(f"c{i}", "read_log", "{}", out) for i, out in enumerate(outputs))
    return TickTrace(number, "Watch the shop.", seen, report)


async def test_the_causality_graph_keeps_the_links_the_model_extracts() -> None:
    reply = (
        '```json\n[{"cause": "nightly backup", "effect": "disk full", "confidence": 0.7},'
        ' {"cause": "disk full", "effect": "failed  writes", "confidence": 3},'
        ' {"cause": "", "effect": "nothing"}, "junk"]\n```'
    )
    side, model = _side(reply)
    trace = _trace(1, "The disk filled up overnight.", "backup wrote 80 GB to /var at 02:00")

    memory = await CausalityGraph().extract(trace, None, side)

    instructions, content = _said(model.requests[0])
    assert instructions == CAUSALITY_INSTRUCTIONS
    assert content.startswith("Known names:\n(none yet)\n\nThe record:\nTick 1: Watch the shop.")
    assert "[read_log] backup wrote 80 GB to /var at 02:00" in content
    assert content.endswith("Report:\nThe disk filled up overnight.")
    assert CausalityGraph().entries(memory) == [
        MemoryEntry("nightly backup -> disk full", "confidence 0.7; tick 1"),
        MemoryEntry("disk full -> failed writes", "confidence 1.0; tick 1"),
    ]


async def test_a_link_seen_again_merges_into_its_edge() -> None:
    first = '[{"cause": "disk full", "effect": "failed writes", "confidence": 0.6}]'
    second = (
        '[{"cause": "Disk FULL", "effect": "failed writes", "confidence": 0.9},'
        ' {"cause": "log rotation off", "effect": "disk full"}]'
    )
    side, model = _side(first, "[]", second)
    graph = CausalityGraph()

    memory = await graph.extract(_trace(1, "x" * 60), None, side)
    memory = await graph.extract(_trace(2, "y" * 60), memory, side)
    memory = await graph.extract(_trace(3, "z" * 60), memory, side)

    assert "Known names:\n- disk full\n- failed writes\n\n" in _said(model.requests[2])[1]
    assert [entry.line for entry in graph.entries(memory)] == [
        "disk full -> failed writes (confidence 0.9; ticks 1, 3)",
        "log rotation off -> disk full (confidence 0.5; tick 3)",
    ]


async def test_the_graph_skips_a_tick_with_nothing_to_read_and_stays_bounded() -> None:
    side, model = _side('[{"cause": "new cause", "effect": "new effect"}]')
    graph = CausalityGraph()
    full = {
        "edges": [
            {"cause": f"c{i}", "effect": f"e{i}", "confidence": 0.5, "ticks": [i]}
            for i in range(MAX_EDGES)
        ]
    }

    assert await graph.extract(_trace(1, "Ok."), full, side) == full
    assert model.requests == []
    grown = await graph.extract(_trace(101, "a" * 60), full, side)
    entries = graph.entries(grown)
    assert len(entries) == MAX_EDGES
    assert entries[0].text == "c1 -> e1"
    assert entries[-1].text == "new cause -> new effect"


async def test_a_malformed_graph_in_the_state_is_an_error() -> None:
    with pytest.raises(SessionDataError, match="causality_graph"):
        CausalityGraph().entries({"edges": [{"cause": "a"}]})
    with pytest.raises(SessionDataError, match="notes"):
        Notes().entries({"not": "a list"})


async def test_notes_keep_each_report_without_a_model_call() -> None:
    side, model = _side()
    notes = Notes()

    memory: Any = None
    for tick in range(1, MAX_NOTES + 3):
        memory = await notes.extract(_trace(tick, f"Report {tick}:   all  quiet."), memory, side)
    memory = await notes.extract(_trace(99, ""), memory, side)

    entries = notes.entries(memory)
    assert len(entries) == MAX_NOTES
    assert entries[0].line == "Report 3: all quiet. (tick 3)"
    assert entries[-1].line == f"Report {MAX_NOTES + 2}: all quiet. (tick {MAX_NOTES + 2})"
    assert model.requests == []


async def test_the_scratchpad_is_rewritten_by_the_model_from_the_pad_and_the_record() -> None:
    side, model = _side(
        "- backup at 02:00 fills /var\n\n- checkout writes fail from 02:13",
        "* backup at 02:00 fills /var\n* rotation of the logs is off",
        "   ",
    )
    pad = Scratchpad()

    memory = await pad.extract(
        _trace(1, "The disk is full.", "02:13 ERROR no space left on /var"), None, side
    )
    memory = await pad.extract(_trace(2, "Logs never rotate." + "x" * 40), memory, side)
    kept = await pad.extract(_trace(3, "y" * 60), memory, side)

    instructions, first = _said(model.requests[0])
    assert instructions == SCRATCHPAD_INSTRUCTIONS
    assert first.startswith("Your scratchpad:\n(empty)\n\nThe record:\nTick 1: Watch the shop.")
    assert "[read_log] 02:13 ERROR no space left on /var" in first
    second = _said(model.requests[1])[1]
    assert second.startswith(
        "Your scratchpad:\n- backup at 02:00 fills /var\n- checkout writes fail from 02:13\n\n"
    )
    assert kept == memory  # an empty reply keeps the pad
    assert [entry.line for entry in pad.entries(memory)] == [
        "backup at 02:00 fills /var (scratchpad, tick 2)",
        "rotation of the logs is off (scratchpad, tick 2)",
    ]
    assert await pad.extract(_trace(4, "Ok."), memory, side) == memory  # too little to send
    assert len(model.requests) == 3
    with pytest.raises(SessionDataError, match="scratchpad"):
        pad.entries({"text": 3})


async def test_structured_json_merges_the_findings_the_model_gives_by_key() -> None:
    side, model = _side(
        '```json\n{"disk_free_gb": 0, "cause": "nightly backup", "affected": ["checkout"]}\n```',
        '{"disk_free_gb": 40, "cause": null, "fix": "backup moved to /data"}',
        "no JSON at all",
    )
    findings = StructuredJson()

    memory = await findings.extract(_trace(1, "The disk is full." + "x" * 40), None, side)
    memory = await findings.extract(_trace(2, "Freed the disk." + "y" * 40), memory, side)
    same = await findings.extract(_trace(3, "z" * 60), memory, side)

    instructions, first = _said(model.requests[0])
    assert instructions == STRUCTURED_INSTRUCTIONS
    assert first.startswith("Findings so far:\n{}\n\nThe record:\nTick 1:")
    second = _said(model.requests[1])[1]
    assert '"cause": "nightly backup"' in second
    assert same == memory
    assert [entry.line for entry in findings.entries(memory)] == [
        'affected: ["checkout"] (tick 1)',
        "disk_free_gb: 40 (tick 2)",
        'fix: "backup moved to /data" (tick 2)',
    ]


async def test_structured_json_keeps_the_latest_findings_only() -> None:
    many = {"findings": [{"key": f"k{i}", "value": i, "tick": 1} for i in range(MAX_FINDINGS)]}
    side, _ = _side('{"k0": "updated", "new": true}')

    memory = await StructuredJson().extract(_trace(2, "n" * 60), many, side)

    lines = [entry.line for entry in StructuredJson().entries(memory)]
    assert len(lines) == MAX_FINDINGS
    assert lines[0] == "k2: 2 (tick 1)"  # k1 went out; k0 was set again, so it is recent
    assert lines[-2:] == ['k0: "updated" (tick 2)', "new: true (tick 2)"]


async def test_no_memory_keeps_nothing_and_asks_nothing() -> None:
    side, model = _side()

    assert await NoMemory().extract(_trace(1, "A long report " * 10), None, side) is None
    assert NoMemory().entries(None) == []
    assert model.requests == []


# --- retrieval_strategy ----------------------------------------------------------------------

ENTRIES = [
    MemoryEntry(text)
    for text in (
        "disk full -> failed writes",
        "nightly backup -> disk full",
        "replication lag -> stale reads",
        "certificate expiry -> TLS handshake errors",
        "traffic spike -> high latency",
        "memory leak -> OOM kills",
    )
]


async def test_hybrid_ranks_by_keywords_and_word_pieces_then_keeps_what_the_model_judges() -> None:
    side, model = _side("[2]")

    recalled = await HybridWithSelfEval().recall("Check the replica and the backup", ENTRIES, side)

    instructions, content = _said(model.requests[0])
    assert instructions == SELF_EVAL_INSTRUCTIONS
    assert content == (
        "The work at hand:\nCheck the replica and the backup\n\nYour memories:\n"
        "1. nightly backup -> disk full\n2. replication lag -> stale reads"
    )
    assert recalled == [ENTRIES[2]]


async def test_word_pieces_find_what_keywords_miss() -> None:
    side, model = _side("not a list")

    by_keyword = await KeywordRetrieval().recall("Is the replica healthy?", ENTRIES, side)
    hybrid = await HybridWithSelfEval().recall("Is the replica healthy?", ENTRIES, side)

    assert by_keyword == []
    assert hybrid[0] == ENTRIES[2]  # an unusable judgement keeps the candidates as ranked
    assert len(model.requests) == 1


async def test_hybrid_asks_nothing_without_candidates_and_honours_an_empty_judgement() -> None:
    side, model = _side("[]")

    assert await HybridWithSelfEval().recall("anything", [], side) == []
    assert model.requests == []
    assert await HybridWithSelfEval().recall("disk full", ENTRIES, side) == []
    assert len(model.requests) == 1


async def test_keyword_and_recent_make_no_model_call() -> None:
    side, model = _side()
    many = [MemoryEntry(f"event {n}") for n in range(12)]

    by_keyword = await KeywordRetrieval().recall("why is the disk full", ENTRIES, side)

    assert by_keyword == ENTRIES[:2]
    assert await RecentRetrieval().recall("ignored", many, side) == many[::-1][:8]
    assert model.requests == []


MEANINGS = [
    MemoryEntry(text)
    for text in (
        "the automobile's battery is dead",
        "the invoice was paid twice",
        "the cat sleeps on the sofa",
    )
]


async def test_semantic_recalls_by_meaning_with_sentence_embeddings() -> None:
    side, model = _side()
    semantic = SemanticRetrieval()  # all-MiniLM-L6-v2, in process

    recalled = await semantic.recall("Why won't my car start?", MEANINGS, side)
    by_keyword = await KeywordRetrieval().recall("Why won't my car start?", MEANINGS, side)

    assert recalled == [MEANINGS[0]]  # no word in common: the embeddings' meaning
    assert by_keyword == []
    assert await semantic.recall("anything", [], side) == []
    assert model.requests == []


async def test_no_retrieval_recalls_nothing() -> None:
    side, model = _side()

    assert await NoRetrieval().recall("disk full", ENTRIES, side) == []
    assert model.requests == []


# --- task_decomposition ----------------------------------------------------------------------

PHASES = (
    '[{"title": "Collect the errors", "done_when": "the error log is read"},'
    ' "Find the cause", {"done_when": "no title"}, {"title": "Report", "done_when": 7}]'
)


async def test_phased_plans_once_and_shows_the_current_phase() -> None:
    side, model = _side(PHASES)
    phased = Phased()

    plan = await phased.prepare("Watch the shop's checkout errors.", None, side)
    again = await phased.prepare("Watch the shop's checkout errors.", plan, side)

    assert again == plan
    (request,) = model.requests
    assert _said(request) == (PLANNING_INSTRUCTIONS, "The task:\nWatch the shop's checkout errors.")
    kept = Plan.from_json(plan)
    assert [(p.title, p.done_when) for p in kept.phases] == [
        ("Collect the errors", "the error log is read"),
        ("Find the cause", ""),
        ("Report", ""),
    ]
    view = phased.view(plan)
    assert view is not None
    assert view.focus == "Collect the errors"
    assert view.text.splitlines()[:4] == [
        "Your plan (phase 1 of 3 is current):",
        "1. [current] Collect the errors (done when: the error log is read)",
        "2. [next] Find the cause",
        "3. [next] Report",
    ]
    assert "call `finish_phase`" in view.text


async def test_a_plan_the_model_did_not_give_is_the_whole_task() -> None:
    side, _ = _side("I would rather not.")

    plan = Plan.from_json(await Phased().prepare("Watch the queue.", None, side))

    assert [(p.title, p.done_when) for p in plan.phases] == [
        ("Watch the queue.", "the task is done")
    ]


async def test_finish_phase_moves_the_saved_plan_on(tmp_path: Path) -> None:
    store = SessionStore.in_dir(tmp_path)
    side, _ = _side(PHASES)
    plan = await Phased().prepare("task", None, side)
    await store.update_state("mon", "s", {PLAN_KEY: plan})
    (tool,) = Phased().tools(store, "mon", "default")
    context = AgentContext(session_id="s")

    first = await tool.call({"summary": "Read 40 errors."}, context)
    await tool.call({"summary": "The card gateway times out."}, context)
    last = await tool.call({"summary": "Reported."}, context)

    assert first == "Phase 1 of 3 is done. Now phase 2 of 3: Find the cause."
    assert last == "Phase 3 of 3 is done. Every phase of the plan is done."
    saved = (await store.load("mon", "s")).state[PLAN_KEY]
    view = Phased().view(saved)
    assert view is not None
    assert view.focus is None
    assert view.text.splitlines() == [
        "Every phase of your plan is done:",
        "1. [done] Collect the errors: Read 40 errors.",
        "2. [done] Find the cause: The card gateway times out.",
        "3. [done] Report: Reported.",
        "Check that the task is complete.",
    ]
    with pytest.raises(ToolError, match="already done"):
        await tool.call({"summary": "more"}, context)
    with pytest.raises(ToolError, match="no plan"):
        await tool.call({"summary": "more"}, AgentContext(session_id="other"))
    with pytest.raises(ToolError, match="'summary'"):
        await tool.call({"summary": " "}, context)
    assert isinstance(tool, FinishPhaseTool)
    await store.aclose()


async def test_single_has_no_plan(tmp_path: Path) -> None:
    side, model = _side()
    single = Single()

    assert await single.prepare("task", None, side) is None
    assert single.view(None) is None
    assert single.tools(SessionStore.in_dir(tmp_path), "mon", "s") == []
    assert model.requests == []


HIERARCHY = (
    '[{"title": "Collect the errors", "steps": ["Read the log", "Group errors by kind"]},'
    ' {"title": "Find the cause", "steps": []}, {"steps": ["no title"]}, 42]'
)


async def test_hierarchical_plans_phases_and_steps_and_shows_the_current_step() -> None:
    side, model = _side(HIERARCHY)
    hierarchical = Hierarchical()

    plan = await hierarchical.prepare("Watch the checkout errors.", None, side)

    assert await hierarchical.prepare("Watch the checkout errors.", plan, side) == plan
    (request,) = model.requests
    assert _said(request) == (HIERARCHY_INSTRUCTIONS, "The task:\nWatch the checkout errors.")
    view = hierarchical.view(plan)
    assert view is not None
    assert view.focus == "Collect the errors\nRead the log"
    assert view.text.splitlines()[:6] == [
        "Your plan (phase 1 of 2, step 1 of 2 is current):",
        "1. [current] Collect the errors",
        "   1.1 [current] Read the log",
        "   1.2 [next] Group errors by kind",
        "2. [next] Find the cause",
        "   2.1 [next] Find the cause",  # a phase given no steps is one step, itself
    ]
    assert "call `finish_step`" in view.text


async def test_a_hierarchy_the_model_did_not_give_is_the_whole_task() -> None:
    side, _ = _side("No.")

    plan = Hierarchy.from_json(await Hierarchical().prepare("Watch the queue.", None, side))

    assert [(s.title, [t.title for t in s.steps]) for s in plan.stages] == [
        ("Watch the queue.", ["Watch the queue."])
    ]


async def test_finish_step_walks_the_steps_then_the_phases(tmp_path: Path) -> None:
    store = SessionStore.in_dir(tmp_path)
    side, _ = _side(HIERARCHY)
    await store.update_state(
        "mon", "s", {HIERARCHY_KEY: await Hierarchical().prepare("task", None, side)}
    )
    (tool,) = Hierarchical().tools(store, "mon", "default")
    context = AgentContext(session_id="s")

    said = [
        await tool.call({"summary": summary}, context)
        for summary in ("Read 40 errors.", "Two kinds.", "The backup.")
    ]

    assert said == [
        "Step 1.1 is done. Now phase 1 of 2, step 2 of 2: Collect the errors / Group errors by "
        "kind.",
        "Step 1.2 is done. Phase 1 is done. Now phase 2 of 2, step 1 of 1: Find the cause / "
        "Find the cause.",
        "Step 2.1 is done. Every step of the plan is done.",
    ]
    view = Hierarchical().view((await store.load("mon", "s")).state[HIERARCHY_KEY])
    assert view is not None
    assert view.focus is None
    assert view.text.splitlines()[:4] == [
        "Every step of your plan is done:",
        "1. [done] Collect the errors",
        "   1.1 [done] Read the log: Read 40 errors.",
        "   1.2 [done] Group errors by kind: Two kinds.",
    ]
    with pytest.raises(ToolError, match="already done"):
        await tool.call({"summary": "more"}, context)
    with pytest.raises(ToolError, match="no plan"):
        await tool.call({"summary": "more"}, AgentContext(session_id="other"))
    with pytest.raises(SessionDataError, match="hierarchical"):
        Hierarchy.from_json({"phases": [], "phase": 0, "step": 0})
    assert isinstance(tool, FinishStepTool)
    await store.aclose()


def test_monolithic_is_the_whole_task_every_tick() -> None:
    assert isinstance(MonitorStrategies(task_decomposition="monolithic").decomposition(), Single)
