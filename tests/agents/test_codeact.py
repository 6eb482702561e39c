"""CodeAct with a scripted model: code blocks run in a real sandboxed REPL, tools are
functions inside it, native and text tool calls work too."""

from __future__ import annotations

from agentloom.agents import (
    AgentEvent,
    AgentFinished,
    CodeActAgent,
    LoopGuard,
    ToolFinished,
    ToolStarted,
    build_agent,
    function_tool,
)
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.inference.scripted import tool_call
from agentloom.llm import LLM, Message
from tests.agents.code_agents import LIMITS, children, sandbox, scripted, texts


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@function_tool
def refuse(reason: str) -> str:
    """Always refuses."""
    raise ToolError(f"refused: {reason}")


def agent(
    llm: LLM,
    *tools: Tool,
    instructions: str | None = None,
    max_turns: int = 10,
    guard: LoopGuard | None = None,
) -> CodeActAgent:
    return CodeActAgent(
        llm,
        tools,
        instructions=instructions,
        max_turns=max_turns,
        guard=guard,
        sandbox=sandbox(),
        limits=LIMITS,
    )


async def events_of(codeact: CodeActAgent, prompt: str) -> list[AgentEvent]:
    return [event async for event in codeact.stream(prompt)]


def code(*lines: str) -> str:
    return "```python\n" + "\n".join(lines) + "\n```"


async def test_state_persists_across_blocks_and_turns() -> None:
    llm, model = scripted(
        "Let me compute.\n" + code("x = 6") + "\nthen\n" + code("print(x * 7)"),
        code("print(x + 1)"),
        "The answer is 42.",
    )
    result = await agent(llm).run("What is 6 * 7?")
    assert result.content == "The answer is 42."
    assert result.stop_reason == "final"
    assert result.turns == 3
    first_observation = texts(model.requests[1])[-1]
    assert first_observation == "[code block 1]\n(no output)\n\n[code block 2]\nstdout:\n42\n"
    assert texts(model.requests[2])[-1] == "[code block 1]\nstdout:\n7\n"
    assert result.metadata == {"code_runs": 3, "code_errors": 0}
    assert children() == []  # the run's REPL is closed with it


async def test_the_prompt_describes_the_repl_and_the_tools_as_functions() -> None:
    llm, model = scripted("Done.")
    codeact = agent(llm, add, instructions="Be brief.")
    await codeact.run([Message.system("Answer in French."), Message.user("hi")])
    system = texts(model.requests[0])[0]
    assert system.startswith("Be brief.\n\nYou have a persistent Python REPL")
    assert "- add(a, b): Add two numbers." in system
    assert system.endswith("Answer in French.")  # a given system message is kept, after it
    assert [t.name for t in model.requests[0].tools] == ["add", "python"]


async def test_tools_are_functions_inside_the_code() -> None:
    llm, model = scripted(code("print(add(2, 3), add(a=10, b=-1))"), "5 and 9")
    events = await events_of(agent(llm, add), "add things")
    result = events[-1]
    assert isinstance(result, AgentFinished)
    assert texts(model.requests[1])[-1] == "[code block 1]\nstdout:\n5 9\n"
    tools = [
        (type(e).__name__, e.call.name if isinstance(e, ToolStarted) else e.outcome.name)
        for e in events
        if isinstance(e, ToolStarted | ToolFinished)
    ]
    assert tools == [
        ("ToolStarted", "python"),
        ("ToolStarted", "add"),
        ("ToolFinished", "add"),
        ("ToolStarted", "add"),
        ("ToolFinished", "add"),
        ("ToolFinished", "python"),
    ]
    outputs = [(o.name, o.output) for o in result.result.tool_results if o.name == "add"]
    assert outputs == [("add", "5"), ("add", "9")]


async def test_a_failing_tool_raises_inside_the_code() -> None:
    llm, model = scripted(
        code("try:\n    refuse('no')\nexcept HostError as e:\n    print('caught:', e)"),
        code("add(1)"),
        "ok",
    )
    await agent(llm, add, refuse).run("go")
    assert texts(model.requests[1])[-1] == ("[code block 1]\nstdout:\ncaught: error: refused: no\n")
    assert "HostError: add(): missing a required argument: 'b'" in texts(model.requests[2])[-1]


async def test_native_tool_calls_run_through_the_executor() -> None:
    llm, model = scripted(
        [tool_call("add", {"a": 1, "b": 2}, "c1"), tool_call("python", {"code": "1 + 1"}, "c2")],
        "3 and 2",
    )
    result = await agent(llm, add).run("go")
    assert result.content == "3 and 2"
    tool_messages = [(m.role, m.tool_call_id, m.content) for m in model.requests[1].messages[-2:]]
    assert tool_messages == [("tool", "c1", "3"), ("tool", "c2", "stdout:\n2\n")]


async def test_text_tool_calls_are_accepted() -> None:
    llm, model = scripted(
        '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 2}}</tool_call>\n'
        "<tool_call>not json</tool_call>",
        "4",
    )
    result = await agent(llm, add).run("go")
    observation = texts(model.requests[1])[-1]
    assert observation.startswith("[tool add]\n4\n\n[tool call not run]\nerror: the <tool_call>")
    assert result.content == "4"


async def test_an_error_is_observed_then_the_model_recovers() -> None:
    llm, model = scripted(
        code("values = [1, 2]", "print(values[5])"), code("print(values[1])"), "2"
    )
    events = await events_of(agent(llm), "go")
    observation = texts(model.requests[1])[-1]
    assert observation.startswith("[code block 1]\nerror: the code failed\nError:\nTraceback")
    assert observation.endswith("IndexError: list index out of range")
    finished = [e.outcome for e in events if isinstance(e, ToolFinished)]
    assert [o.is_error for o in finished] == [True, False]
    result = events[-1]
    assert isinstance(result, AgentFinished)
    assert result.result.metadata == {"code_runs": 2, "code_errors": 1}


async def test_final_from_code_ends_the_run() -> None:
    llm, _ = scripted(code("FINAL({'answer': 6 * 7})", "print('still runs')"), "never read")
    result = await agent(llm).run("go")
    assert result.content == '{"answer": 42}'
    assert result.turns == 1
    assert result.stop_reason == "final"
    llm, _ = scripted(code("FINAL('plain text')"))
    assert (await agent(llm).run("go")).content == "plain text"


async def test_a_bare_final_line_is_the_answer() -> None:
    llm, _ = scripted('FINAL("forty-two")')
    assert (await agent(llm).run("go")).content == "forty-two"


async def test_max_turns_stops_a_model_that_keeps_coding() -> None:
    llm, _ = scripted(code("a = 1"), code("b = 2"), code("c = 3"))
    result = await agent(llm, max_turns=2).run("go")
    assert result.stop_reason == "max_turns"
    assert result.max_turns_exceeded
    assert result.turns == 2
    assert result.metadata == {"code_runs": 2, "code_errors": 0}


async def test_the_loop_guard_stops_repeated_code() -> None:
    same = code("print('again')")
    llm, model = scripted(same, same, same, "unreached")
    result = await agent(llm, guard=LoopGuard(max_repeats=1)).run("go")
    assert result.stop_reason == "loop_guard"
    assert texts(model.requests[2])[-1].startswith("[code block 1]\nblocked:")


async def test_the_registry_builds_codeact() -> None:
    llm, _ = scripted("hello")
    built = build_agent("codeact", llm)
    assert isinstance(built, CodeActAgent)
    assert built.name == "codeact"
