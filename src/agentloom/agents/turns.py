"""What a turn of the server :class:`~agentloom.agents.remote.Agent` yields and returns.

A turn is one or more Responses calls on a session (a server conversation): the model answers,
calls hosted tools on the server, or calls function tools, which run here, client-side, until
it is done. Its events form one typed stream ending with :class:`TurnCompleted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Literal, TypeAlias

from agentloom.agents.base import AgentUsage, ToolOutcome
from agentloom.agents.turn_steps import CompletionMessage, ShieldCallStep, TurnStep
from agentloom.frozen import frozen
from agentloom.llm.types import Message, MessageToolCall

if TYPE_CHECKING:  # the openai types are heavy to import; only the remote Agent needs them
    from openai.types.responses import Response, ResponseOutputItem

__all__ = [
    "HostedToolCall",
    "InferenceStarted",
    "LocalToolFinished",
    "LocalToolStarted",
    "ShieldCalled",
    "ToolOutput",
    "TurnCompleted",
    "TurnEvent",
    "TurnResult",
    "TurnStatus",
    "TurnTextDelta",
]

TurnStatus = Literal["completed", "incomplete", "requires_action", "max_rounds", "blocked"]


@frozen
class ToolOutput:
    """The output of a function call, sent back to the model (answers a pending call)."""

    call_id: str
    output: str


@frozen
class TurnResult:
    """A finished turn.

    ``status`` is ``completed``, ``incomplete`` (the server stopped at a limit),
    ``max_rounds`` (the model kept calling tools), ``blocked`` (a shield refused the input or
    the output: ``output_text`` is the refusal) or ``requires_action``: the model called a
    tool declared only by its :class:`~agentloom.llm.types.FunctionTool`, so the turn waits for
    its output (``pending_calls``); answer with :meth:`answer` as the next turn's messages. The
    outputs of the local tools called alongside are already in the session.

    Llama Stack's turn: ``input_messages`` (the turn's messages), ``steps`` (shield calls,
    inferences and tool executions, in order) and ``output_message`` (the last answer).
    ``response`` is the last Responses call's, ``None`` when an input shield stopped the turn
    before any.
    """

    session_id: str
    output_text: str
    status: TurnStatus
    response: Response | None
    response_ids: tuple[str, ...]
    tool_results: tuple[ToolOutcome, ...] = ()
    hosted_calls: tuple[ResponseOutputItem, ...] = ()
    pending_calls: tuple[MessageToolCall, ...] = ()
    usage: AgentUsage = field(default_factory=AgentUsage)
    turn_id: str = ""
    input_messages: tuple[Message, ...] = ()
    steps: tuple[TurnStep, ...] = ()
    output_message: CompletionMessage = field(
        default_factory=lambda: CompletionMessage("", "end_of_turn")
    )

    def answer(self, outputs: Mapping[str, str]) -> tuple[ToolOutput, ...]:
        """The messages that continue a ``requires_action`` turn: ``outputs`` maps each pending
        call's ``call_id`` to its output."""
        missing = [call.call_id for call in self.pending_calls if call.call_id not in outputs]
        if missing:
            raise ValueError(f"no output given for pending call(s) {', '.join(missing)}")
        return tuple(ToolOutput(call.call_id, outputs[call.call_id]) for call in self.pending_calls)


@frozen
class InferenceStarted:
    """A Responses call starts (``round`` is 1-based; each tool round is one more call)."""

    round: int
    type: Literal["inference_started"] = "inference_started"


@frozen
class TurnTextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@frozen
class LocalToolStarted:
    """A function tool starts running here, client-side."""

    call: MessageToolCall
    type: Literal["tool_started"] = "tool_started"


@frozen
class LocalToolFinished:
    outcome: ToolOutcome
    type: Literal["tool_finished"] = "tool_finished"


@frozen
class HostedToolCall:
    """A tool the server ran (web_search_call, file_search_call, mcp_call ...), as it ended."""

    item: ResponseOutputItem
    type: Literal["hosted_tool_call"] = "hosted_tool_call"


@frozen
class ShieldCalled:
    """Shields checked the turn's input (before the model) or its output (after it)."""

    step: ShieldCallStep
    type: Literal["shield_call"] = "shield_call"


@frozen
class TurnCompleted:
    result: TurnResult
    type: Literal["turn_completed"] = "turn_completed"


TurnEvent: TypeAlias = (
    InferenceStarted
    | TurnTextDelta
    | LocalToolStarted
    | LocalToolFinished
    | HostedToolCall
    | ShieldCalled
    | TurnCompleted
)
