"""What every agent strategy shares: its input, its context, its events and its result.

A strategy implements :meth:`BaseAgent.stream`, one typed event iterator ending with
:class:`AgentFinished`; :meth:`BaseAgent.run` is that stream collected, so both cannot drift.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, Literal, TypeAlias, get_args

from agentloom.bus import EventBus
from agentloom.frozen import frozen
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.state import ConversationState
from agentloom.llm.types import Message, MessageToolCall, Metrics

__all__ = [
    "AgentContext",
    "AgentEvent",
    "AgentFinished",
    "AgentInput",
    "AgentResult",
    "AgentUsage",
    "BaseAgent",
    "MemoryResult",
    "ReasoningDelta",
    "StopReason",
    "TextDelta",
    "ToolFinished",
    "ToolOutcome",
    "ToolStarted",
    "TurnStarted",
    "memory_section",
    "with_memory",
]

AgentInput: TypeAlias = str | Sequence[Message]
ResultKey = Literal[
    "content", "tool_results", "turns", "usage", "stop_reason", "messages", "metadata"
]
RESULT_KEYS: frozenset[str] = frozenset(get_args(ResultKey))
StopReason = Literal["final", "max_turns", "loop_guard", "error"]


@frozen
class MemoryResult:
    """Something recalled before a run (a memory search hit, a document's passage), shown to
    the model with the run's system prompt; ``source`` and ``score`` are shown when given."""

    content: str
    source: str | None = None
    score: float | None = None

    def line(self, number: int) -> str:
        about = [part for part in (self.source, _score(self.score)) if part]
        head = f"[{number}] ({'; '.join(about)}) " if about else f"[{number}] "
        return head + self.content.strip()


def _score(score: float | None) -> str | None:
    return None if score is None else f"score {score:.2f}"


@dataclass
class AgentContext:
    """Where a run happens: its session, its workspace (for file tools), its model state, and
    memory fetched for it beforehand (``memory_results``: texts or :class:`MemoryResult`,
    shown to the model after the system prompt, in the given order)."""

    session_id: str | None = None
    workspace: Path | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    state: ConversationState | None = None  # Responses stateful mode keeps its id here
    bus: EventBus | None = None
    memory_results: Sequence[MemoryResult | str] = ()


MEMORY_HEAD = (
    "Memory retrieved for this request (it may help; it may be out of date or beside the "
    "point, so use your judgement):"
)


def memory_section(results: Sequence[MemoryResult | str]) -> str | None:
    """The system prompt's section showing ``results`` (``None`` when there are none)."""
    given = [r if isinstance(r, MemoryResult) else MemoryResult(r) for r in results]
    kept = [r for r in given if r.content.strip()]
    if not kept:
        return None
    lines = "\n".join(result.line(n) for n, result in enumerate(kept, start=1))
    return f"{MEMORY_HEAD}\n{lines}"


def with_memory(messages: list[Message], results: Sequence[MemoryResult | str]) -> list[Message]:
    """``messages`` with the memory section added to their system prompt (one is made first
    when there is none)."""
    section = memory_section(results)
    if section is None:
        return messages
    first = messages[0] if messages else None
    if first is not None and first.role in ("system", "developer") and first.content:
        return [replace(first, content=f"{first.content}\n\n{section}"), *messages[1:]]
    return [Message.system(section), *messages]


@frozen
class ToolOutcome:
    """One tool call and what it returned (``is_error`` when it failed: the text says why)."""

    call_id: str
    name: str
    arguments: str
    output: str
    is_error: bool = False


@frozen
class AgentUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    model_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, metrics: Metrics) -> AgentUsage:
        return AgentUsage(
            self.input_tokens + metrics.input_tokens,
            self.output_tokens + metrics.output_tokens,
            self.cached_tokens + metrics.cached_tokens,
            self.reasoning_tokens + metrics.reasoning_tokens,
            self.model_calls + 1,
        )

    def merge(self, other: AgentUsage) -> AgentUsage:
        return AgentUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.model_calls + other.model_calls,
        )


@frozen
class AgentResult:
    """A run's answer (``content``), the tools it used, its turns, usage and why it stopped."""

    content: str
    tool_results: tuple[ToolOutcome, ...] = ()
    turns: int = 0
    usage: AgentUsage = field(default_factory=AgentUsage)
    stop_reason: StopReason = "final"
    messages: tuple[Message, ...] = ()
    metadata: dict[str, JSONValue] = field(default_factory=dict)

    @property
    def max_turns_exceeded(self) -> bool:
        return self.stop_reason == "max_turns"

    def __getitem__(self, key: ResultKey) -> object:
        """``result["content"]`` (OpenJarvis's ``ask_full`` returns a dict): a field by name."""
        if key not in RESULT_KEYS:
            raise KeyError(key)
        value: object = getattr(self, key)
        return value


# --- events ----------------------------------------------------------------------------------


@frozen
class TurnStarted:
    turn: int  # 1-based
    type: Literal["turn_started"] = "turn_started"


@frozen
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@frozen
class ReasoningDelta:
    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@frozen
class ToolStarted:
    call: MessageToolCall
    type: Literal["tool_started"] = "tool_started"


@frozen
class ToolFinished:
    outcome: ToolOutcome
    type: Literal["tool_finished"] = "tool_finished"


@frozen
class AgentFinished:
    result: AgentResult
    type: Literal["agent_finished"] = "agent_finished"


AgentEvent: TypeAlias = (
    TurnStarted | TextDelta | ReasoningDelta | ToolStarted | ToolFinished | AgentFinished
)


# --- the base class --------------------------------------------------------------------------


class BaseAgent(ABC):
    """An agent strategy over an :class:`LLM`.

    Subclasses set ``name`` and ``description`` (shown by ``agentloom agents``) and implement
    :meth:`stream`; its last event must be :class:`AgentFinished`.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def __init__(self, llm: LLM, *, instructions: str | None = None) -> None:
        self.llm = llm
        self.instructions = instructions

    @abstractmethod
    def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run the agent, yielding its steps; the last event is :class:`AgentFinished`."""

    async def run(self, input: AgentInput, context: AgentContext | None = None) -> AgentResult:
        async with aclosing(self.stream(input, context)) as events:
            async for event in events:
                if isinstance(event, AgentFinished):
                    return event.result
        raise RuntimeError(f"agent {self.name!r} ended without a result")

    def messages(self, input: AgentInput, system: str | None = None) -> list[Message]:
        """The conversation a run starts from: instructions (or ``system``) then the input."""
        prompt = system if system is not None else self.instructions
        head = [Message.system(prompt)] if prompt else []
        if isinstance(input, str):
            return [*head, Message.user(input)]
        given = list(input)
        if given and given[0].role in ("system", "developer"):
            return given
        return [*head, *given]
