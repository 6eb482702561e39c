"""The steps of a server :class:`~agentloom.agents.remote.Agent` turn, in Llama Stack's shape.

A finished turn (:class:`~agentloom.agents.turns.TurnResult`) lists what happened in order:
``shield_call`` (the input or the output checked by shields), ``inference`` (one model answer:
its text and the tools it called) and ``tool_execution`` (tools run, on the server or here).
One Responses call may hold several model answers: the server runs hosted tools
(``file_search``, ``code_interpreter`` ...) between them, so :func:`response_steps` splits its
output at each hosted call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from agentloom.agents.base import ToolOutcome
from agentloom.frozen import frozen
from agentloom.llm.types import MessageToolCall

if TYPE_CHECKING:
    from openai.types.responses import Response, ResponseOutputItem, ResponseOutputMessage

__all__ = [
    "CompletionMessage",
    "InferenceStep",
    "SafetyViolation",
    "ShieldCallStep",
    "StopReason",
    "ToolCall",
    "ToolExecutionStep",
    "ToolResponse",
    "TurnStep",
    "refusal_of",
    "response_steps",
    "tool_execution",
]

StopReason = Literal["end_of_turn", "end_of_message", "out_of_tokens"]
ViolationLevel = Literal["info", "warn", "error"]
Metadata: TypeAlias = dict[str, str | bool | list[str]]

_NOT_TOOL_CALLS = frozenset({"message", "reasoning", "function_call", "compaction"})


@frozen
class ToolCall:
    """A tool the model called: ``arguments`` is the JSON text it wrote."""

    call_id: str
    tool_name: str
    arguments: str


@frozen
class ToolResponse:
    call_id: str
    tool_name: str
    content: str
    is_error: bool = False


@frozen
class CompletionMessage:
    """What the model said in one answer (``content``) and the tools it called."""

    content: str
    stop_reason: StopReason
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@frozen
class SafetyViolation:
    """A shield's finding: ``user_message`` is what the user is told, ``metadata`` which shield
    found what (as ``POST /v1/safety/run-shield`` answers)."""

    violation_level: ViolationLevel
    user_message: str | None
    metadata: Metadata = field(default_factory=dict)


@frozen
class InferenceStep:
    """One model answer, made during the Responses call ``response_id``."""

    step_id: str
    turn_id: str
    response_id: str
    model_response: CompletionMessage
    step_type: Literal["inference"] = "inference"


@frozen
class ToolExecutionStep:
    """Tools run, by the server (``hosted``) or here, client-side."""

    step_id: str
    turn_id: str
    tool_calls: tuple[ToolCall, ...]
    tool_responses: tuple[ToolResponse, ...]
    hosted: bool
    step_type: Literal["tool_execution"] = "tool_execution"


@frozen
class ShieldCallStep:
    """Shields checked the turn's ``input`` or ``output``; ``violation`` is ``None`` when they
    found nothing."""

    step_id: str
    turn_id: str
    direction: Literal["input", "output"]
    shields: tuple[str, ...]
    violation: SafetyViolation | None
    step_type: Literal["shield_call"] = "shield_call"


TurnStep: TypeAlias = InferenceStep | ToolExecutionStep | ShieldCallStep


# --- a Responses call's output as steps --------------------------------------------------------


@dataclass
class _Answer:
    """The model answer being read: its text and calls, until a hosted call ends it."""

    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    hosted: list[ToolResponse] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.text or self.calls)


def response_steps(response: Response, turn_id: str, first: int) -> list[TurnStep]:
    """``response``'s output as steps, numbered from ``first``: an inference step per model
    answer, a hosted tool execution after each answer that called hosted tools."""
    steps: list[TurnStep] = []
    answer = _Answer()
    for item in response.output:
        if item.type in _NOT_TOOL_CALLS:
            if answer.hosted:  # the hosted calls ran: a new answer starts
                steps.extend(
                    _close(answer, response, turn_id, first + len(steps), "end_of_message")
                )
                answer = _Answer()
            _read(answer, item)
            continue
        call, result = hosted_call(item)
        answer.calls.append(call)
        answer.hosted.append(result)
    steps.extend(_close(answer, response, turn_id, first + len(steps), _stop_reason(response)))
    return steps


def _read(answer: _Answer, item: ResponseOutputItem) -> None:
    if item.type == "message":
        answer.text.append(message_text(item))
    elif item.type == "function_call":
        answer.calls.append(ToolCall(item.call_id, item.name, item.arguments))


def _close(
    answer: _Answer, response: Response, turn_id: str, number: int, stop: StopReason
) -> list[TurnStep]:
    if answer.empty():
        return []
    reason: StopReason = "end_of_message" if answer.calls and stop == "end_of_turn" else stop
    message = CompletionMessage("".join(answer.text), reason, tuple(answer.calls))
    steps: list[TurnStep] = [
        InferenceStep(_step_id(turn_id, number), turn_id, response.id, message)
    ]
    if answer.hosted:
        hosted = tuple(c for c in answer.calls if c.call_id in {r.call_id for r in answer.hosted})
        steps.append(
            ToolExecutionStep(
                _step_id(turn_id, number + 1), turn_id, hosted, tuple(answer.hosted), hosted=True
            )
        )
    return steps


def tool_execution(
    turn_id: str, number: int, calls: Sequence[MessageToolCall], outcomes: Iterable[ToolOutcome]
) -> ToolExecutionStep:
    """The local tools one round ran, client-side."""
    return ToolExecutionStep(
        _step_id(turn_id, number),
        turn_id,
        tuple(ToolCall(c.call_id, c.name, c.arguments) for c in calls),
        tuple(ToolResponse(o.call_id, o.name, o.output, o.is_error) for o in outcomes),
        hosted=False,
    )


def _step_id(turn_id: str, number: int) -> str:
    return f"{turn_id}-step-{number}"


def _stop_reason(response: Response) -> StopReason:
    details = response.incomplete_details
    if response.status == "incomplete" and details and details.reason == "max_output_tokens":
        return "out_of_tokens"
    return "end_of_turn"


def message_text(item: ResponseOutputMessage) -> str:
    """A message's text: its output text, or its refusal when a shield refused."""
    return "".join(
        part.text if part.type == "output_text" else part.refusal for part in item.content
    )


def refusal_of(response: Response) -> str | None:
    """The refusal in ``response``'s output (a guardrail blocked it), or ``None``."""
    for item in response.output:
        if item.type == "message":
            refusals = [part.refusal for part in item.content if part.type == "refusal"]
            if refusals:
                return "".join(refusals)
    return None


# --- what the server's tools were asked and answered -------------------------------------------


def hosted_call(item: ResponseOutputItem) -> tuple[ToolCall, ToolResponse]:
    """A hosted tool call item as the call and its response."""
    name, arguments, content = _hosted_parts(item)
    call_id = item.id or name
    failed = getattr(item, "status", None) == "failed"
    return ToolCall(call_id, name, arguments), ToolResponse(call_id, name, content, failed)


def _hosted_parts(item: ResponseOutputItem) -> tuple[str, str, str]:
    if item.type == "file_search_call":
        found = [f"{r.filename}: {r.text}" for r in item.results or () if r.text]
        return "file_search", json.dumps({"queries": item.queries}), "\n\n".join(found)
    if item.type == "code_interpreter_call":
        logs = [o.logs for o in item.outputs or () if o.type == "logs"]
        return "code_interpreter", json.dumps({"code": item.code or ""}), "".join(logs)
    if item.type == "web_search_call":
        query = getattr(item.action, "query", None)
        return "web_search", json.dumps({"query": query}), item.status
    if item.type == "mcp_call":
        error = item.error if isinstance(item.error, str) or item.error is None else "error"
        return f"{item.server_label}.{item.name}", item.arguments, error or item.output or ""
    return item.type, "{}", getattr(item, "status", "") or ""
