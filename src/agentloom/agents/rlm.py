"""RLM, the recursive language model: a long context lives in the REPL, never in the prompt.

The model sees only the question, and how long the context is; the context itself is the
variable ``context`` of the run's persistent REPL. The model reads it with code (slices,
``re``, splitting) and hands pieces to language-model sub-calls:

- ``llm_query(prompt) -> str``: one sub-call (to ``sub_llm``, by default the agent's model);
- ``llm_batch(prompts) -> list[str]``: many at once, run concurrently (``batch_concurrency``
  at a time); if any fails the call raises, naming it;
- the agent's tools, as functions; ``FINAL(answer)`` gives the answer and ends the run.

Where the context comes from: ``RLMAgent(..., context_text=...)`` for a fixed document, else
the input's long user messages (over ``inline_chars``): one becomes a ``str``, several a
``list[str]``, and the conversation keeps a note in their place. The run's usage counts the
sub-calls; ``result.metadata`` has ``code_runs``, ``code_errors`` (runs that raised: the model
was told, marked as errors), ``sub_calls`` and ``context_chars``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agentloom.agents.base import AgentInput
from agentloom.agents.code_session import CodeSession
from agentloom.agents.codeact import CodeActAgent, CodeSetup
from agentloom.agents.loop_guard import LoopGuard
from agentloom.agents.repl import REPL_LIMITS, CallbackError, HostFunction
from agentloom.agents.tool_agent import AgentRun
from agentloom.agents.tools.base import Tool
from agentloom.errors import AgentloomError
from agentloom.frozen import frozen
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import Message
from agentloom.tools.sandbox import Limits, Sandbox

__all__ = ["RLMAgent", "SubCalls"]

_HEAD = (
    "You answer questions about a context that is too long to read at once, by writing Python "
    "that examines it and asks a language model about pieces of it."
)

_NOTE = """\
The context is NOT in this conversation. It is the REPL variable `context`: {shape}.
Look at it with code: print its length, slices and the lines that match a search; never print
it whole (output is cut). The REPL also has:
- llm_query(prompt: str) -> str: ask a language model; put the piece of the context it must
  read in the prompt (it reads about {sub_chars} characters at most).
- llm_batch(prompts: list[str]) -> list[str]: many llm_query calls at once, concurrently: use
  it for chunks.
- FINAL(answer): give your final answer; the run ends after that block.
Keep going, turn after turn, until you call FINAL(answer)."""


@frozen
class _Failed:
    message: str


class SubCalls:
    """A run's sub-calls to the language model, within a budget; their usage goes to the
    session."""

    def __init__(
        self, llm: LLM, session: CodeSession, *, limit: int = 100, concurrency: int = 8
    ) -> None:
        self.llm = llm
        self.session = session
        self.limit = limit
        self.count = 0
        self._slots = asyncio.Semaphore(concurrency)

    def functions(self) -> dict[str, HostFunction]:
        return {"llm_query": self.llm_query, "llm_batch": self.llm_batch}

    async def llm_query(self, prompt: str) -> str:
        """Ask a language model; its answer, as text."""
        if not isinstance(prompt, str):
            raise CallbackError("llm_query(prompt) takes a string")
        self._reserve(1)
        return await self._ask(prompt)

    async def llm_batch(self, prompts: list[str]) -> JSONValue:
        """Ask about each prompt, concurrently; the answers, in order."""
        if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
            raise CallbackError("llm_batch(prompts) takes a list of strings")
        self._reserve(len(prompts))
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self._try(prompt)) for prompt in prompts]
        answers = [task.result() for task in tasks]
        failed = [(i, a) for i, a in enumerate(answers) if isinstance(a, _Failed)]
        if failed:
            index, first = failed[0]
            raise CallbackError(
                f"{len(failed)} of {len(prompts)} prompts failed; prompt {index}: {first.message}"
            )
        return [a for a in answers if isinstance(a, str)]

    def _reserve(self, count: int) -> None:
        if self.count + count > self.limit:
            raise CallbackError(
                f"the run may make {self.limit} sub-calls; {self.count} are made, "
                f"{count} more asked for"
            )
        self.count += count

    async def _try(self, prompt: str) -> str | _Failed:
        try:
            return await self._ask(prompt)
        except AgentloomError as exc:
            return _Failed(str(exc))

    async def _ask(self, prompt: str) -> str:
        async with self._slots:
            response = await self.llm.chat([Message.user(prompt)])
        self.session.add_usage(response.metrics)
        return response.text


class RLMAgent(CodeActAgent):
    """The RLM strategy (see the module doc). ``sub_llm``: the model of sub-calls;
    ``max_sub_calls``: their budget per run; ``sub_chars``: what the prompt says a sub-call
    can read."""

    name = "rlm"
    description = "Long context in a REPL variable; the model reads it with code and sub-calls"

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
        sub_llm: LLM | None = None,
        context_text: str | None = None,
        inline_chars: int = 4000,
        max_sub_calls: int = 100,
        batch_concurrency: int = 8,
        sub_chars: int = 100_000,
    ) -> None:
        super().__init__(
            llm,
            tools,
            instructions=instructions or _HEAD,
            max_turns=max_turns,
            guard=guard,
            sandbox=sandbox,
            limits=limits,
            output_chars=output_chars,
        )
        self.sub_llm = sub_llm or llm
        self.context_text = context_text
        self.inline_chars = inline_chars
        self.max_sub_calls = max_sub_calls
        self.batch_concurrency = batch_concurrency
        self.sub_chars = sub_chars
        self._sub_calls: SubCalls | None = None  # the current run's
        self._context_chars = 0

    def setup(self, input: AgentInput) -> CodeSetup:
        """The context out of the conversation, into the REPL's ``context``."""
        if self.context_text is not None:
            return self._setup(input, self.context_text)
        messages = [Message.user(input)] if isinstance(input, str) else list(input)
        several = sum(1 for m in messages if self._is_long(m)) > 1
        moved: list[str] = []
        kept: list[Message] = []
        for message in messages:
            if self._is_long(message):
                where = f"context[{len(moved)}]" if several else "context"
                moved.append(message.text)
                kept.append(Message.user(_placeholder(len(moved[-1]), where)))
            else:
                kept.append(message)
        context: JSONValue = moved[0] if len(moved) == 1 else list(moved)
        return self._setup(kept, context)

    def _is_long(self, message: Message) -> bool:
        text = message.content  # a message with image parts stays a message
        return message.role == "user" and isinstance(text, str) and len(text) > self.inline_chars

    def _setup(self, input: AgentInput, context: JSONValue) -> CodeSetup:
        self._context_chars = _chars(context)
        note = _NOTE.format(shape=_shape(context), sub_chars=f"{self.sub_chars:,}")
        return CodeSetup(input, {"context": context}, note)

    def host_functions(self, session: CodeSession) -> dict[str, HostFunction]:
        self._sub_calls = SubCalls(
            self.sub_llm, session, limit=self.max_sub_calls, concurrency=self.batch_concurrency
        )
        return {**super().host_functions(session), **self._sub_calls.functions()}

    def metadata(self, run: AgentRun, session: CodeSession) -> dict[str, JSONValue]:
        sub_calls = self._sub_calls.count if self._sub_calls is not None else 0
        extra: dict[str, JSONValue] = {"sub_calls": sub_calls, "context_chars": self._context_chars}
        return {**super().metadata(run, session), **extra}


def _placeholder(length: int, where: str) -> str:
    return f"[A document of {length:,} characters: it is in the REPL variable `{where}`.]"


def _chars(context: JSONValue) -> int:
    if isinstance(context, str):
        return len(context)
    items = context if isinstance(context, list) else []
    return sum(len(item) for item in items if isinstance(item, str))


def _shape(context: JSONValue) -> str:
    if isinstance(context, str):
        lines = context.count("\n") + 1 if context else 0
        return f"a str of {len(context):,} characters ({lines:,} line{'' if lines == 1 else 's'})"
    if isinstance(context, list):
        sizes = ", ".join(f"{len(item):,}" for item in context if isinstance(item, str))
        return f"a list of {len(context)} str (characters: {sizes})" if context else "empty"
    return "empty"
