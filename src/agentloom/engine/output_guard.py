"""The output guardrail of one model call: chunks are held until a check covering them passed.

Text (and reasoning, and the model's own refusals) is checked in batches: once
``batch_chars`` unchecked characters are pending, one check reads the *window* = the last
``overlap_chars`` already checked + the pending text. Only checked text is released, and the
last ``overlap_chars`` of it stay held until the next check (or the end): a violation of up to
``overlap_chars`` characters split across a batch boundary is inside the next window, and none
of it was released. A change of kind (reasoning -> text) ends a segment: its rest is checked and
released. Tool calls are held to the end of the call and their arguments checked then (except
calls of server tools, checked when they run). On a violation the model's stream is closed and
a refusal takes the place of everything not yet released.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence

from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.safety.base import Role
from agentloom.safety.service import Decision

Check = Callable[[Sequence[tuple[str, Role]]], Awaitable[Decision]]
"""Checks several ``(text, role)`` at once and decides for all of them."""

TextChunk = inf.TextDelta | inf.ReasoningDelta | inf.RefusalDelta


@frozen
class StreamWindow:
    """How streamed output is checked: every ``batch_chars`` new characters, each check also
    re-reading (and holding back) the last ``overlap_chars`` checked ones."""

    batch_chars: int = 100
    overlap_chars: int = 64

    def __post_init__(self) -> None:
        if self.batch_chars < 1 or self.overlap_chars < 0:
            raise ValueError("batch_chars must be >= 1 and overlap_chars >= 0")


@frozen
class _Held:
    chunk: TextChunk
    end: int  # where its text ends in the segment


class OutputGuard:
    """Wraps one model call's chunk stream (:meth:`run`). ``blocked`` is the decision that
    stopped it, if one did; ``on_block`` is called before the refusal is released."""

    def __init__(
        self,
        check: Check,
        window: StreamWindow,
        *,
        hosted: frozenset[str] = frozenset(),
        on_block: Callable[[], None] | None = None,
    ) -> None:
        self._check = check
        self._window = window
        self._hosted = hosted  # server tools: their calls are checked when they run
        self._on_block = on_block
        self._held: deque[_Held] = deque()
        self._kind: type[TextChunk] | None = None  # the kind of the current segment
        self._tail = ""  # the end of the segment's checked text (the next window's overlap)
        self._checked = 0  # segment characters checked
        self._length = 0  # segment characters received
        self._pending: list[str] = []
        self._calls: list[inf.ToolCallDelta] = []
        self._trailer: list[inf.Chunk] = []  # finish and usage, released last
        self.blocked: Decision | None = None

    async def run(self, chunks: AsyncIterator[inf.Chunk]) -> AsyncGenerator[inf.Chunk, None]:
        try:
            async for chunk in chunks:
                for released in await self._on_chunk(chunk):
                    yield released
                if self.blocked is not None:
                    break  # stop reading the model
            else:
                for released in await self._on_end():
                    yield released
        finally:
            if isinstance(chunks, AsyncGenerator):
                await chunks.aclose()
        if self.blocked is not None:
            if self._on_block is not None:
                self._on_block()
            yield inf.RefusalDelta(self.blocked.message)
            yield inf.Finish("stop")

    # --- chunks ------------------------------------------------------------------------------

    async def _on_chunk(self, chunk: inf.Chunk) -> list[inf.Chunk]:
        if isinstance(chunk, inf.ToolCallDelta):
            self._calls.append(chunk)
            return []
        if isinstance(chunk, inf.Finish | inf.Usage):
            self._trailer.append(chunk)
            return []
        released: list[inf.Chunk] = []
        if self._kind is not None and not isinstance(chunk, self._kind):
            released += await self._end_segment()
            if self.blocked is not None:
                return []
        self._kind = type(chunk)
        self._length += len(chunk.text)
        self._held.append(_Held(chunk, self._length))
        self._pending.append(chunk.text)
        if self._length - self._checked < self._window.batch_chars:
            return released
        if not await self._check_pending():
            return []
        return released + self._release(self._checked - self._window.overlap_chars)

    async def _on_end(self) -> list[inf.Chunk]:
        """The model is done: check the rest of the text and the calls' arguments together."""
        if not await self._check_pending(self._call_texts()):
            return []
        released: list[inf.Chunk] = [held.chunk for held in self._held]
        self._held.clear()
        return [*released, *self._calls, *self._trailer]

    async def _end_segment(self) -> list[inf.Chunk]:
        if not await self._check_pending():
            return []
        released: list[inf.Chunk] = [held.chunk for held in self._held]
        self._held.clear()
        self._kind, self._tail, self._checked, self._length = None, "", 0, 0
        return released

    # --- checks ------------------------------------------------------------------------------

    async def _check_pending(self, extra: Sequence[tuple[str, Role]] = ()) -> bool:
        """Check the window (when text is pending) and ``extra``; False when blocked."""
        texts = list(extra)
        window = self._tail + "".join(self._pending)
        if self._pending:
            texts.insert(0, (window, "assistant"))
        if not texts:
            return True
        decision = await self._check(texts)
        if decision.blocked:
            self.blocked = decision
            return False
        overlap = self._window.overlap_chars
        self._tail = window[-overlap:] if overlap else ""
        self._checked = self._length
        self._pending.clear()
        return True

    def _release(self, bound: int) -> list[inf.Chunk]:
        """The held chunks whose text ends at or before ``bound``, in order."""
        released: list[inf.Chunk] = []
        while self._held and self._held[0].end <= bound:
            released.append(self._held.popleft().chunk)
        return released

    def _call_texts(self) -> list[tuple[str, Role]]:
        """The arguments of each function call handed to the client."""
        names: dict[int, str | None] = {}
        arguments: dict[int, list[str]] = {}
        for delta in self._calls:
            names[delta.index] = names.get(delta.index) or delta.name
            arguments.setdefault(delta.index, []).append(delta.arguments)
        return [
            ("".join(parts), "assistant")
            for index, parts in arguments.items()
            if names[index] not in self._hosted
        ]
