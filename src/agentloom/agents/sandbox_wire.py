"""The channel between a sandboxed agent and its child: JSON lines over the child's stdin and
stdout, one object each with an ``op``.

host -> child:
    ``start {payload}`` once, first (:class:`SandboxPayload`: the task, the inner agent, the
    model, in ``direct`` mode the endpoint and API key); then the answers to model calls:
    ``model_event {id, event}`` for each :data:`~agentloom.llm.types.LLMEvent`, and
    ``model_done {id}`` or ``model_error {id, error}``.
child -> host:
    ``event {event}`` for each :data:`~agentloom.agents.base.AgentEvent`, the last an
    ``agent_finished``; ``model {id, model, path, messages, tools, options}`` to ask the host for
    a model call (``proxy`` mode); ``failed {error}`` when the run cannot go on.

An ``error`` is ``{kind, message, code, status}``, ``kind`` one of :data:`ERROR_KINDS`. Everything
the child sends is validated before it is used: the child is not trusted.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agentloom.agents.base import AgentEvent, AgentInput
from agentloom.agents.sandbox_policy import ModelAccess
from agentloom.agents.saved_history import message_from_json, message_to_json
from agentloom.errors import AgentloomError, InvalidRequestError, UpstreamError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject, JSONValue
from agentloom.llm.options import CallOptions
from agentloom.llm.types import (
    FunctionTool,
    LLMCompleted,
    LLMEvent,
    Message,
    Path,
    ToolCallEvent,
)

__all__ = [
    "ERROR_KINDS",
    "ModelCall",
    "SandboxPayload",
    "SandboxRunError",
    "decode_agent_event",
    "decode_llm_event",
    "decode_model_call",
    "encode_agent_event",
    "encode_llm_event",
    "encode_model_call",
    "error_from_json",
    "error_to_json",
    "input_from_json",
    "input_to_json",
]


class SandboxRunError(AgentloomError):
    """The sandboxed run failed: its child died, timed out, broke the protocol or crashed."""


class WireMemory(BaseModel):
    """A :class:`~agentloom.agents.base.MemoryResult` in the payload."""

    model_config = ConfigDict(extra="forbid")

    content: str
    source: str | None = None
    score: float | None = None


class SandboxPayload(BaseModel):
    """What the child needs to run the inner agent; sent on its stdin, never in its arguments
    or environment (``api_key`` is a secret: it is left out of ``repr``)."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    tools: list[str] = []
    instructions: str | None = None
    max_turns: int = 10
    input: str | list[dict[str, Any]]
    session_id: str | None = None
    metadata: dict[str, str] = {}
    memory_results: list[WireMemory] = []  # AgentContext.memory_results
    workspace: str | None = None  # a mount to work in; default: the scratch directory
    model: str
    model_access: ModelAccess = "proxy"
    path: Path | None = None
    base_url: str | None = None  # direct mode only
    api_key: str | None = Field(default=None, repr=False)  # direct mode only


@frozen
class ModelCall:
    """A model call the child asks the host to make (``proxy`` mode); ``path`` ``None`` lets
    the host's LLM route it."""

    id: int
    model: str
    messages: tuple[Message, ...]
    tools: tuple[FunctionTool, ...] = ()
    options: CallOptions | None = None
    path: Path | None = None


# --- the typed data as JSON ------------------------------------------------------------------

# The SDK's dataclasses hold free-form JSON (``JSONValue``, a recursive alias pydantic cannot
# follow): read as ``Any`` here, which is what it is. The provider's own objects (``raw``,
# ``raw_response``) stay with the host: they are left out before anything is encoded.
_JSON_NAMES: dict[str, Any] = {"JSONValue": Any, "JSONObject": dict[str, Any]}


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(kind)
    adapter.rebuild(_types_namespace=_JSON_NAMES)
    return adapter


def encode_agent_event(event: AgentEvent) -> JSONObject:
    encoded: JSONObject = _adapter(AgentEvent).dump_python(event, mode="json")
    return encoded


def decode_agent_event(data: JSONValue) -> AgentEvent:
    event: AgentEvent = _adapter(AgentEvent).validate_python(data)
    return event


def encode_llm_event(event: LLMEvent) -> JSONObject:
    encoded: JSONObject = _adapter(LLMEvent).dump_python(_without_raw(event), mode="json")
    return encoded


def _without_raw(event: LLMEvent) -> LLMEvent:
    if isinstance(event, LLMCompleted):
        return replace(event, response=event.response.without_raw())
    if isinstance(event, ToolCallEvent):
        return replace(event, call=replace(event.call, raw=None))
    return event


def decode_llm_event(data: JSONValue) -> LLMEvent:
    event: LLMEvent = _adapter(LLMEvent).validate_python(data)
    return event


def encode_model_call(call: ModelCall) -> JSONObject:
    messages = tuple(m.without_raw() for m in call.messages)
    encoded: JSONObject = _adapter(ModelCall).dump_python(
        replace(call, messages=messages), mode="json"
    )
    return {"op": "model", **encoded}


def decode_model_call(data: JSONObject) -> ModelCall:
    """The call the child asked for; ``ValueError`` (pydantic's included) when it is not one."""
    call: ModelCall = _adapter(ModelCall).validate_python(data)
    return call


def input_to_json(input: AgentInput) -> str | list[dict[str, Any]]:
    if isinstance(input, str):
        return input
    return [message_to_json(message) for message in input]


def input_from_json(data: str | list[dict[str, Any]]) -> AgentInput:
    if isinstance(data, str):
        return data
    return [message_from_json(message) for message in data]


# --- errors ----------------------------------------------------------------------------------

ErrorKind = Literal["invalid_request", "upstream", "failed"]
ERROR_KINDS: dict[ErrorKind, type[AgentloomError]] = {
    "invalid_request": InvalidRequestError,
    "upstream": UpstreamError,
    "failed": SandboxRunError,
}


def error_to_json(exc: BaseException) -> JSONObject:
    """An error as the channel carries it: the first class of :data:`ERROR_KINDS` it is, its
    message, code and (upstream) status; anything else is ``failed``, named by its type."""
    kind: ErrorKind = next(
        (name for name, cls in ERROR_KINDS.items() if isinstance(exc, cls)), "failed"
    )
    if not isinstance(exc, AgentloomError):
        return {"kind": kind, "message": f"{type(exc).__name__}: {exc}"}
    status = exc.status if isinstance(exc, UpstreamError) else None
    return {"kind": kind, "message": exc.message, "code": exc.code, "status": status}


class _Error(BaseModel):
    kind: ErrorKind = "failed"
    message: str = "the sandboxed agent failed without saying why"
    code: str | None = None
    status: int | None = None
    output: str = ""  # the tail of what the child printed (a crash's traceback)


def error_from_json(data: JSONValue) -> AgentloomError:
    """The error :func:`error_to_json` wrote (a :class:`SandboxRunError` for anything else)."""
    error = _Error.model_validate(data) if isinstance(data, dict) else _Error()
    if error.kind == "upstream":
        return UpstreamError(error.message, status=error.status, code=error.code)
    if error.kind == "failed" and error.output.strip():
        return SandboxRunError(f"{error.message}; its output ended: {error.output.strip()}")
    return ERROR_KINDS[error.kind](error.message, code=error.code)
