"""The SDK-side condenser: a call that overflows the context window is retried once, with the
conversation's oldest turns summarised by the same model.

With ``LLM(condenser=Condenser())``, a call the server refuses with
:class:`~agentloom.errors.ContextLengthExceededError` (before anything was streamed) is handled
so: the system and developer messages are kept, and so are the latest ``keep_recent`` messages
(moved back so a tool result stays with its call); everything between is sent to the same model,
as a transcript, to be summarised; the call is retried once with the instructions, the summary
(a user message starting with :data:`SUMMARY_PREFIX`) and the recent messages. A second overflow,
of the retry or of the summary call, is the caller's error and is raised.

The answer says what was done: ``reply.condensation`` holds the summary, how many messages it
replaced and the condensed history that was sent. Continue the conversation from that history
(``[*reply.condensation.messages, reply.message, ...]``); in stateful mode the server holds it
from then on.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import Final

from agentloom.errors import ContextLengthExceededError
from agentloom.frozen import frozen
from agentloom.llm.types import Condensation, ImageContent, LLMCompleted, LLMEvent, Message

__all__ = ["SUMMARY_PREFIX", "Condensation", "Condenser", "condensing"]

SUMMARY_PREFIX: Final = "Summary of the earlier conversation:\n"
INSTRUCTIONS: Final = (
    "You condense conversations. Summarise the conversation below so that it can continue "
    "without it: keep the user's goals and constraints, facts and decisions, names, numbers, "
    "what tools were called and what they returned, and what is still open. Be concise; write "
    "only the summary."
)

Run = Callable[[Sequence[Message]], AsyncGenerator[LLMEvent, None]]
Summarise = Callable[[Sequence[Message]], Awaitable[str]]


@frozen
class Condenser:
    """How a conversation that overflows the context window is condensed.

    ``keep_recent``: the latest messages kept as they are (at least 1); ``instructions``: the
    system prompt of the summary call; ``max_summary_tokens``: its ``max_output_tokens``.
    """

    keep_recent: int = 4
    instructions: str = INSTRUCTIONS
    max_summary_tokens: int | None = 1024

    def __post_init__(self) -> None:
        if self.keep_recent < 1:
            raise ValueError(f"keep_recent must be at least 1, got {self.keep_recent}")

    def split(
        self, messages: Sequence[Message]
    ) -> tuple[list[Message], list[Message], list[Message]] | None:
        """``(instructions, oldest, recent)``, or ``None`` when there is nothing to summarise."""
        instructions = [m for m in messages if m.role in ("system", "developer")]
        turns = [m for m in messages if m.role not in ("system", "developer")]
        cut = len(turns) - self.keep_recent
        while cut > 0 and turns[cut].role == "tool":  # a tool result stays with its call
            cut -= 1
        if cut <= 0:
            return None
        return instructions, turns[:cut], turns[cut:]


async def condensing(
    run: Run, messages: Sequence[Message], condenser: Condenser, summarise: Summarise
) -> AsyncGenerator[LLMEvent, None]:
    """``run(messages)``'s events; on an overflow before the first event, those of one retry
    with the oldest turns summarised (its completed answer carrying the :class:`Condensation`)."""
    streamed = False  # once something was streamed it is too late to condense
    try:
        async with aclosing(run(messages)) as events:
            async for event in events:
                streamed = True
                yield event
        return
    except ContextLengthExceededError:
        parts = None if streamed else condenser.split(messages)
        if parts is None:
            raise
    instructions, oldest, recent = parts
    summary = await summarise([Message.system(condenser.instructions), _transcript(oldest)])
    condensed = (*instructions, Message.user(SUMMARY_PREFIX + summary), *recent)
    done = Condensation(summary, len(oldest), condensed)
    try:
        async with aclosing(run(condensed)) as events:
            async for event in events:
                if isinstance(event, LLMCompleted):
                    event = LLMCompleted(replace(event.response, condensation=done))
                yield event
    except ContextLengthExceededError as exc:
        raise ContextLengthExceededError(
            f"the conversation still overflows the context window with its {len(oldest)} "
            f"oldest messages summarised: {exc.message}",
            status=exc.status,
            param=exc.param,
            code=exc.code,
        ) from exc


def _transcript(messages: Sequence[Message]) -> Message:
    lines = [_line(m) for m in messages]
    return Message.user("The conversation so far:\n\n" + "\n\n".join(filter(None, lines)))


def _line(message: Message) -> str:
    images = sum(isinstance(p, ImageContent) for p in message.parts)
    said = message.text + (f" [{images} image(s)]" if images else "")
    calls = [f"[called {c.name}({c.arguments})]" for c in message.tool_calls]
    if message.role == "tool":
        return f"tool {message.name or message.tool_call_id} returned: {said}"
    return f"{message.role}: " + " ".join(filter(None, [said, *calls]))
