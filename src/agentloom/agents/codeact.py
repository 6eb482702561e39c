"""CodeAct: the model acts by writing Python, run in a persistent sandboxed REPL.

Each turn the model may write fenced ```` ```python ```` blocks: each runs, in order, in the
run's :class:`~agentloom.agents.repl.Repl` (bubblewrap where installed, else the rlimits-only
subprocess), and what it printed and any error come back as the next user message. Tools are
Python functions inside the REPL (``calculator("2 + 2")``), and the model may also call them
natively or as text (``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``). A reply
with neither code nor calls is the final answer; so is the value code passes to
``FINAL(value)``.

Code runs go through the tool executor as calls of the ``python`` tool: the loop guard sees
them, and ``ToolStarted``/``ToolFinished`` events (name ``"python"``) report them, with the
tool calls the code made in between. The REPL lives for one run and is closed at its end.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import field, replace

from agentloom.agents.base import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    AgentInput,
    ToolFinished,
    ToolOutcome,
)
from agentloom.agents.code_reply import (
    BadToolCall,
    CodeBlock,
    ReplyStep,
    final_answer,
    parse_code_reply,
)
from agentloom.agents.code_session import (
    PYTHON,
    CodeSession,
    PythonTool,
    describe_tools,
)
from agentloom.agents.loop_guard import LoopGuard
from agentloom.agents.repl import REPL_LIMITS, HostFunction, Repl
from agentloom.agents.tool_agent import AgentRun, ToolUsingAgent
from agentloom.agents.tools.base import Tool
from agentloom.agents.url_prefetch import UrlPrefetch
from agentloom.frozen import frozen
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import LLMResponse, Message, MessageToolCall
from agentloom.tools.sandbox import Limits, Sandbox

__all__ = ["CodeActAgent", "CodeSetup"]

_PROMPT = """\
{head}

You have a persistent Python REPL: variables, functions and imports stay from one code block
to the next. To run code, write it in a fenced block:
```python
print(2 + 2)
```
Every block in your reply runs, in order, and you then see what it printed and any error.
Print what you need to see (the last expression of a block is printed too).
{functions}
When you have the answer, reply with it and no code block, or call FINAL(answer) in code."""

_FUNCTIONS = """
These tools are Python functions in the REPL (they return text):
{lines}
You may also call a tool directly as <tool_call>{{"name": "<tool>", "arguments": {{...}}}}\
</tool_call>.
"""


@frozen
class CodeSetup:
    """How a run starts: the conversation's input, the variables put in the REPL first, and
    what the system prompt says about them."""

    input: AgentInput
    variables: Mapping[str, JSONValue] = field(default_factory=dict)
    note: str = ""


@frozen
class _Plan:
    """The calls of one reply, and for text replies how to report each step (``None``:
    native calls, answered by tool messages)."""

    calls: list[MessageToolCall]
    steps: list[ReplyStep] | None = None


class CodeActAgent(ToolUsingAgent):
    """The CodeAct strategy. ``sandbox`` / ``limits``: the REPL's (default: bubblewrap where
    installed, :data:`~agentloom.agents.repl.REPL_LIMITS`); ``output_chars``: how much of each
    output the model sees; ``prefetch``: fetch the pages the input links to first."""

    name = "codeact"
    description = "The model writes Python; code runs in a persistent sandboxed REPL"

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] = (),
        *,
        instructions: str | None = None,
        max_turns: int = 10,
        guard: LoopGuard | None = None,
        sandbox: Sandbox | None = None,
        limits: Limits = REPL_LIMITS,
        output_chars: int = 4000,
        prefetch: UrlPrefetch | None = None,
    ) -> None:
        self.python = PythonTool(output_chars)
        every = [*tools, self.python]
        super().__init__(llm, every, instructions=instructions, max_turns=max_turns, guard=guard)
        self.sandbox = sandbox
        self.limits = limits
        self.prefetch = prefetch

    # --- hooks for variants (rlm) ------------------------------------------------------------

    def setup(self, input: AgentInput) -> CodeSetup:
        """How a run over ``input`` starts (CodeAct: as given, no variables)."""
        return CodeSetup(input)

    def host_functions(self, session: CodeSession) -> dict[str, HostFunction]:
        """The functions the code may call: the tools."""
        return session.tool_functions()

    def system_prompt(self, setup: CodeSetup, functions: dict[str, HostFunction]) -> str:
        head = self.instructions or "You are a helpful assistant who solves tasks with Python."
        lines = describe_tools(functions, list(self.executor.tools.values()))
        listed = _FUNCTIONS.format(lines=lines) if lines else ""
        prompt = _PROMPT.format(head=head, functions=listed)
        return f"{prompt}\n\n{setup.note}" if setup.note else prompt

    def metadata(self, run: AgentRun, session: CodeSession) -> dict[str, JSONValue]:
        runs = [o for o in run.tool_results if o.name == PYTHON]
        return {"code_runs": len(runs), "code_errors": sum(o.is_error for o in runs)}

    # --- the loop ----------------------------------------------------------------------------

    async def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        setup = self.setup(input)
        run = self.start(setup.input, context, system="")
        if self.prefetch is not None:
            await self.prefetch.inline(run.messages)
        session = CodeSession(self.executor, run.context)
        functions = self.host_functions(session)
        _add_system(run.messages, self.system_prompt(setup, functions))
        repl = Repl(callbacks=functions, sandbox=self.sandbox, limits=self.limits)
        async with repl:
            for name, value in setup.variables.items():
                await repl.set_variable(name, value)
            self.python.repl, self.python.results = repl, []
            try:
                async for event in self._turns(run, session):
                    yield event
            finally:
                self.python.repl = None

    async def _turns(self, run: AgentRun, session: CodeSession) -> AsyncGenerator[AgentEvent, None]:
        while run.turns < self.max_turns:
            async for event in self.model_turn(run):
                yield event
            reply = run.reply
            run.messages.append(reply.message)
            plan = _plan(reply, run.turns)
            if not plan.calls and plan.steps == []:
                yield self._done(run, session, final_answer(reply.text))
                return
            async for event in self._run_calls(run, session, plan.calls):
                yield event
            run.messages.extend(_feedback(plan, run.outcomes))
            final = self.python.take_final()
            if final is not None:
                yield self._done(run, session, final)
                return
            if run.loop_detected:
                yield self._with_metadata(self.unfinished(run, "loop_guard"), run, session)
                return
        yield self._with_metadata(self.unfinished(run, "max_turns"), run, session)

    async def _run_calls(
        self, run: AgentRun, session: CodeSession, calls: list[MessageToolCall]
    ) -> AsyncGenerator[AgentEvent, None]:
        """The calls through the executor; the calls made by code are reported between the
        runs' start and finish events, and their outcomes and model usage join the run's."""
        flushed = False
        async for event in self.run_tools(run, calls):
            if isinstance(event, ToolFinished) and not flushed:
                flushed = True
                for inner in session.take_events():
                    yield inner
            yield event
        for inner in session.take_events():  # no calls (only unreadable text tool calls)
            yield inner
        run.tool_results.extend(session.take_outcomes())
        run.usage = run.usage.merge(session.take_usage())

    def _done(self, run: AgentRun, session: CodeSession, answer: str) -> AgentFinished:
        return self.finish(run, answer, "final", self.metadata(run, session))

    def _with_metadata(
        self, finished: AgentFinished, run: AgentRun, session: CodeSession
    ) -> AgentFinished:
        metadata = {**finished.result.metadata, **self.metadata(run, session)}
        return AgentFinished(replace(finished.result, metadata=metadata))


def _add_system(messages: list[Message], prompt: str) -> None:
    """Put the strategy's prompt first; a system message given with the input follows it."""
    if messages and messages[0].role in ("system", "developer") and messages[0].content:
        prompt = f"{prompt}\n\n{messages.pop(0).content}"
    messages.insert(0, Message.system(prompt))


def _plan(reply: LLMResponse, turn: int) -> _Plan:
    if reply.tool_calls:
        return _Plan(list(reply.tool_calls))
    steps = parse_code_reply(reply.text)
    calls: list[MessageToolCall] = []
    for index, step in enumerate(steps, 1):
        if isinstance(step, CodeBlock):
            arguments = json.dumps({"code": step.code})
            calls.append(MessageToolCall(f"code_{turn}_{index}", PYTHON, arguments))
        elif not isinstance(step, BadToolCall):
            calls.append(MessageToolCall(f"text_{turn}_{index}", step.name, step.arguments))
    return _Plan(calls, steps)


def _feedback(plan: _Plan, outcomes: Sequence[ToolOutcome]) -> list[Message]:
    """Native calls: one tool message each. Text steps: one user message, a section each."""
    if plan.steps is None:
        return [Message.tool(o.call_id, o.output, o.name) for o in outcomes]
    sections: list[str] = []
    remaining = iter(outcomes)
    blocks = 0
    for step in plan.steps:
        if isinstance(step, BadToolCall):
            sections.append(f"[tool call not run]\nerror: {step.problem}")
            continue
        outcome = next(remaining)
        if isinstance(step, CodeBlock):
            blocks += 1
            sections.append(f"[code block {blocks}]\n{outcome.output}")
        else:
            sections.append(f"[tool {outcome.name}]\n{outcome.output}")
    return [Message.user("\n\n".join(sections))]
