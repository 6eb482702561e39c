"""A deterministic model: turns given in advance, or a function (provider type ``scripted``).

Tests and examples script its turns; configured as a provider it echoes, for trying the API
with no backend.

```python
model = ScriptedModel([
    [reasoning("Let me look."), tool_call("get_weather", {"city": "Paris"})],
    "It is sunny in Paris.",
])
```

Each ``stream()`` call plays the next turn. A turn is a sequence of script items: chunks, the
builders below (``text``, ``tool_call`` ...), ``delay``/``raise_error`` and the backend faults
``break_stream``/``invalid_chunk``/``stall``. A turn ends with a ``Finish`` and a ``Usage``
unless it gives its own: its input tokens are a quarter of the characters of the messages and
tool definitions, rounded up, which is also what ``count_tokens`` answers (as a tokenizer would,
so tests can predict it). With neither turns nor a function the model echoes the last user
message. Every streamed request is kept in ``.requests``.

Faults describe what an HTTP backend does wrong. :class:`~agentloom.testing.backend.FakeBackend`
acts them out on the wire (via :meth:`ScriptedModel.events`); ``stream()`` turns them into the
error an HTTP provider would raise, so the engine only ever sees :data:`Chunk` values.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from typing import TypeAlias, cast

from agentloom.errors import UpstreamError
from agentloom.frozen import frozen
from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    Finish,
    FinishReason,
    FunctionSpec,
    ModelInfo,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    TextPart,
    TokenCount,
    ToolCallDelta,
    Usage,
)

__all__ = [
    "BreakStream",
    "Delay",
    "Fault",
    "InvalidChunk",
    "RaiseError",
    "Responder",
    "ScriptItem",
    "ScriptedModel",
    "ScriptedToolCall",
    "Stall",
    "Turn",
    "TurnPart",
    "break_stream",
    "delay",
    "finish",
    "invalid_chunk",
    "prompt_tokens",
    "raise_error",
    "reasoning",
    "refusal",
    "stall",
    "text",
    "tool_call",
    "usage",
]


# --- script items that are not chunks --------------------------------------------------------


@frozen
class ScriptedToolCall:
    """A whole tool call; played as ``ToolCallDelta`` s with the turn's next index."""

    name: str
    arguments: str
    call_id: str | None = None
    chunk_size: int | None = None


@frozen
class Delay:
    """Sleep before the next item (a slow model)."""

    seconds: float


@frozen
class RaiseError:
    """Raise ``error`` at this point of the turn (before any chunk: an HTTP error status)."""

    error: UpstreamError


@frozen
class BreakStream:
    """Fault: the backend drops the connection mid-stream."""


@frozen
class InvalidChunk:
    """Fault: the backend sends ``data`` as a stream line (not a chat completion chunk)."""

    data: str = "this is not json"


@frozen
class Stall:
    """Fault: the backend goes silent mid-stream (after the response headers) for ``seconds``."""

    seconds: float


Fault: TypeAlias = BreakStream | InvalidChunk | Stall
ScriptItem: TypeAlias = Chunk | ScriptedToolCall | Delay | RaiseError | Fault
TurnPart: TypeAlias = str | ScriptItem | Sequence[ScriptItem]
Turn: TypeAlias = str | Sequence[TurnPart]
Responder: TypeAlias = Callable[
    [ChatRequest], "str | Sequence[TurnPart] | AsyncIterator[ScriptItem]"
]


# --- builders --------------------------------------------------------------------------------


def _pieces(content: str, chunk_size: int | None) -> list[str]:
    if chunk_size is None or not content:
        return [content]
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    return [content[i : i + chunk_size] for i in range(0, len(content), chunk_size)]


def text(content: str, chunk_size: int | None = None) -> tuple[TextDelta, ...]:
    """Output text, in one delta or in deltas of ``chunk_size`` characters."""
    return tuple(TextDelta(piece) for piece in _pieces(content, chunk_size))


def reasoning(content: str, chunk_size: int | None = None) -> tuple[ReasoningDelta, ...]:
    return tuple(ReasoningDelta(piece) for piece in _pieces(content, chunk_size))


def refusal(content: str, chunk_size: int | None = None) -> tuple[RefusalDelta, ...]:
    return tuple(RefusalDelta(piece) for piece in _pieces(content, chunk_size))


def tool_call(
    name: str,
    arguments: Mapping[str, object] | str = "{}",
    call_id: str | None = None,
    *,
    chunk_size: int | None = None,
) -> ScriptedToolCall:
    """A function call; ``call_id`` defaults to ``call_scripted_<n>`` (n counts per model)."""
    args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return ScriptedToolCall(name, args, call_id, chunk_size)


def finish(reason: FinishReason = "stop") -> Finish:
    return Finish(reason)


def usage(
    input_tokens: int = 0,
    output_tokens: int = 0,
    *,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
) -> Usage:
    return Usage(input_tokens, output_tokens, cached_tokens, reasoning_tokens)


def raise_error(error: UpstreamError) -> RaiseError:
    return RaiseError(error)


def delay(seconds: float) -> Delay:
    return Delay(seconds)


def break_stream() -> BreakStream:
    return BreakStream()


def invalid_chunk(data: str = "this is not json") -> InvalidChunk:
    return InvalidChunk(data)


def stall(seconds: float) -> Stall:
    return Stall(seconds)


def _flatten(parts: Iterable[TurnPart]) -> tuple[ScriptItem, ...]:
    items: list[ScriptItem] = []
    for part in parts:
        if isinstance(part, str):
            items.extend(text(part))
        elif isinstance(part, Sequence):  # mypy keeps ``str`` in this branch
            items.extend(cast("Sequence[ScriptItem]", part))
        else:
            items.append(part)
    return tuple(items)


def _turn(turn: Turn) -> tuple[ScriptItem, ...]:
    return _flatten([turn] if isinstance(turn, str) else turn)


# --- playing one turn ------------------------------------------------------------------------


def _estimate(chars: int) -> int:
    return max(1, (chars + 3) // 4)


def _message_chars(message: ChatMessage) -> int:
    chars = sum(len(call.name) + len(call.arguments) for call in message.tool_calls)
    if isinstance(message.content, str):
        return chars + len(message.content)
    parts = message.content or ()
    return chars + sum(len(part.text) for part in parts if isinstance(part, TextPart))


def _tool_chars(spec: FunctionSpec) -> int:
    return len(spec.name) + len(spec.description or "") + len(json.dumps(spec.parameters))


def prompt_tokens(request: ChatRequest) -> int:
    """The scripted model's input token count for ``request`` (its usage and ``count_tokens``)."""
    chars = sum(_message_chars(m) for m in request.messages)
    return _estimate(chars + sum(_tool_chars(spec) for spec in request.tools))


class _Tally:
    """What a turn has produced so far: decides the automatic ``Finish`` and ``Usage``."""

    def __init__(self, request: ChatRequest, new_call_id: Callable[[], str]) -> None:
        self._request = request
        self._new_call_id = new_call_id
        self._next_tool = 0
        self._output_chars = 0
        self._reasoning_chars = 0
        self._finished = False
        self._usage = False

    def expand(self, item: Chunk | ScriptedToolCall | Fault) -> list[Chunk | Fault]:
        if isinstance(item, ScriptedToolCall):
            return list(self._tool_call(item))
        if isinstance(item, TextDelta | RefusalDelta):
            self._output_chars += len(item.text)
        elif isinstance(item, ReasoningDelta):
            self._reasoning_chars += len(item.text)
        elif isinstance(item, ToolCallDelta):
            self._next_tool = max(self._next_tool, item.index + 1)
            self._output_chars += len(item.arguments) + len(item.name or "")
        elif isinstance(item, Finish):
            self._finished = True
        elif isinstance(item, Usage):
            return [*self._finish(), item]
        return [item]

    def closing(self) -> list[Chunk | Fault]:
        if self._usage:
            return []
        return [*self._finish(), self._estimated_usage()]

    def _finish(self) -> list[Chunk | Fault]:
        self._usage = True
        if self._finished:
            return []
        self._finished = True
        return [Finish("tool_calls" if self._next_tool else "stop")]

    def _tool_call(self, call: ScriptedToolCall) -> list[ToolCallDelta]:
        index, self._next_tool = self._next_tool, self._next_tool + 1
        self._output_chars += len(call.name) + len(call.arguments)
        pieces = _pieces(call.arguments, call.chunk_size)
        first = ToolCallDelta(index, call.call_id or self._new_call_id(), call.name, pieces[0])
        return [first, *(ToolCallDelta(index, arguments=piece) for piece in pieces[1:])]

    def _estimated_usage(self) -> Usage:
        reasoning_tokens = _estimate(self._reasoning_chars) if self._reasoning_chars else 0
        return Usage(
            input_tokens=prompt_tokens(self._request),
            output_tokens=_estimate(self._output_chars) + reasoning_tokens,
            reasoning_tokens=reasoning_tokens,
        )


async def _items(source: AsyncIterator[ScriptItem]) -> AsyncGenerator[ScriptItem, None]:
    async for item in source:
        yield item


async def _listed(items: Sequence[ScriptItem]) -> AsyncGenerator[ScriptItem, None]:
    for item in items:
        yield item


def _echo(request: ChatRequest) -> tuple[ScriptItem, ...]:
    for message in reversed(request.messages):
        if message.role == "user":
            content = message.content
            if isinstance(content, str):
                return text(content) if content else ()
            said = "".join(part.text for part in content or () if isinstance(part, TextPart))
            return text(said) if said else ()
    return ()


def _fault_error(fault: BreakStream | InvalidChunk) -> UpstreamError:
    if isinstance(fault, BreakStream):
        return UpstreamError("the inference backend closed the stream before it finished")
    return UpstreamError(f"the inference backend sent an invalid stream chunk: {fault.data!r}")


# --- the model -------------------------------------------------------------------------------


class ScriptedModel:
    """A :class:`~agentloom.inference.base.Provider` that plays scripted turns.

    ``script`` is a list of turns (one per ``stream()`` call) or a function of the request.
    """

    def __init__(
        self,
        script: Iterable[Turn] | Responder = (),
        *,
        models: Sequence[str] = ("scripted",),
        context_window: int | None = None,
    ) -> None:
        self.requests: list[ChatRequest] = []
        self.models = tuple(models)
        self.context_window = context_window
        self._turns: deque[tuple[ScriptItem, ...]] = deque()
        self._respond: Responder | None = None
        self._scripted = False
        self._calls = 0
        if callable(script):
            self.respond_with(script)
        else:
            self.add_turns(*script)

    # --- scripting ---------------------------------------------------------------------------

    def add_turn(self, *parts: TurnPart) -> None:
        """Append one turn, e.g. ``add_turn(reasoning("hm"), "Hello", tool_call("f", {}))``."""
        self._turns.append(_flatten(parts))
        self._scripted = True

    def add_turns(self, *turns: Turn) -> None:
        for turn in turns:
            self._turns.append(_turn(turn))
            self._scripted = True

    def respond_with(self, respond: Responder) -> None:
        """Answer every request with ``respond(request)`` (turns are ignored from now on)."""
        self._respond = respond

    @property
    def remaining(self) -> int:
        """How many scripted turns are left."""
        return len(self._turns)

    # --- Provider ----------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        """Play the next turn as chunks; faults become the errors an HTTP provider raises."""
        async with aclosing(self.events(request)) as events:
            async for event in events:
                if isinstance(event, Stall):
                    await asyncio.sleep(event.seconds)
                elif isinstance(event, BreakStream | InvalidChunk):
                    raise _fault_error(event)
                else:
                    yield event

    async def events(self, request: ChatRequest) -> AsyncGenerator[Chunk | Fault, None]:
        """Play the next turn with its faults, for a backend to act them out on the wire."""
        self.requests.append(request)
        tally = _Tally(request, self._new_call_id)
        async with aclosing(self._source(request)) as items:
            async for item in items:
                if isinstance(item, Delay):
                    await asyncio.sleep(item.seconds)
                elif isinstance(item, RaiseError):
                    raise item.error
                else:
                    for event in tally.expand(item):
                        yield event
        for event in tally.closing():
            yield event

    async def count_tokens(self, request: ChatRequest) -> TokenCount:
        """:func:`prompt_tokens`, the input tokens of this model's usage chunks."""
        return TokenCount(prompt_tokens(request), "tokenizer")

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo(id=m, context_window=self.context_window) for m in self.models]

    async def aclose(self) -> None:
        return None

    # --- internals ---------------------------------------------------------------------------

    def _source(self, request: ChatRequest) -> AsyncGenerator[ScriptItem, None]:
        if self._respond is not None:
            answer = self._respond(request)
            if isinstance(answer, AsyncGenerator):
                return answer
            if isinstance(answer, AsyncIterator):
                return _items(answer)
            return _listed(_turn(answer))
        if not self._scripted:
            return _listed(_echo(request))
        if not self._turns:
            raise UpstreamError("ScriptedModel has no more turns")
        return _listed(self._turns.popleft())

    def _new_call_id(self) -> str:
        self._calls += 1
        return f"call_scripted_{self._calls}"
