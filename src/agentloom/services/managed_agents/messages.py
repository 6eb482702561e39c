"""Messages to managed agents: queued for a run, or answered at once with the reply streamed.

A streamed message (``stream: true``) is checked first (the agent, its model, its tools: a
mistake is an error answer, not a broken stream; the agent and its conversation are one read),
then the agent runs with its tokens streamed as the model makes them
(:mod:`agentloom.services.managed_agents.stream`). The message is written as the turn starts:
the write
and the model's first call go together, and no frame reaches the client before the message is
stored (the first token waits for whichever of the two is slower). The reply is stored when the
turn ends, before ``[DONE]``, also when the client goes away first (what was said so far,
``incomplete``). A message
that is not streamed is stored ``pending``: the agent's next run takes it, and ``mode:
"immediate"`` starts that run at once unless one is queued or going already.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing

import anyio

from agentloom.api.managed_agents import AgentMessage, AgentMessagePage, SendMessageRequest
from agentloom.errors import ConflictError, NotFoundError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.services.managed_agents.factory import AgentFactory, BuiltAgent
from agentloom.services.managed_agents.runs import AgentRuns
from agentloom.services.managed_agents.service import ManagedAgentsService, config_of, not_found
from agentloom.services.managed_agents.stream import DONE, Frame, TurnStream, turn_frames
from agentloom.services.managed_agents.wire import message_page, message_wire
from agentloom.storage.base import Order
from agentloom.storage.managed_agents import MessageRow, SqlManagedAgentStore, TurnEnd

__all__ = ["AgentMessages", "StreamedTurn"]


@frozen
class StreamedTurn:
    frames: AsyncGenerator[Frame, None]
    release: Callable[[], Awaitable[None]]  # closes the agent's tools (once)


class AgentMessages:
    def __init__(
        self,
        agents: ManagedAgentsService,
        store: SqlManagedAgentStore,
        factory: AgentFactory,
        runs: AgentRuns,
        *,
        history: int,
    ) -> None:
        self._agents = agents
        self._store = store
        self._factory = factory
        self._runs = runs
        self._history = history

    async def queue(self, agent_id: str, request: SendMessageRequest) -> AgentMessage:
        """Store the message for the agent's next run (started now when ``immediate``)."""
        await self._agents.stored(agent_id, "update")
        message = _message(agent_id, request, "pending")
        await self._store.add_message(message)
        if request.mode != "immediate":
            return message_wire(message)
        try:
            run = await self._runs.start(agent_id, "message")
        except ConflictError:  # a run is queued or going: the next one takes it
            return message_wire(message)
        return message_wire(message).model_copy(update={"run_id": run.id})

    async def stream(self, agent_id: str, request: SendMessageRequest) -> StreamedTurn:
        """Run the agent on the message now: its frames, and what releases what the turn holds
        (for a client gone before they were read). Everything that can be refused is refused
        before this returns."""
        found = await self._store.turn_context(agent_id, self._history)
        if found is None:
            raise not_found(agent_id)
        row, history = found
        built = await self._factory.build(agent_id, row.agent_type, config_of(row))
        frames = self._turn(built, history, _message(agent_id, request, "delivered"))
        return StreamedTurn(frames, built.aclose)

    async def _turn(
        self, built: BuiltAgent, history: Sequence[MessageRow], message: MessageRow
    ) -> AsyncGenerator[Frame, None]:
        """The turn's frames. The message is written as the turn starts: the write and the
        model's first call go together, and no frame is let out (no text, no tool call, no end)
        before the message is stored. The reply is stored before ``[DONE]`` is let out (or, the
        client gone, when the turn stops)."""
        stored = asyncio.ensure_future(self._store.add_message(message))
        turn = TurnStream(built.model)
        ended = False
        try:
            frames = turn_frames(built, turn, built.input(history, [message.content]))
            async with aclosing(frames):
                async for frame in frames:
                    if not stored.done():  # nothing reaches the client before it is stored
                        await stored
                    if frame is DONE:
                        await self._store.end_turn(message.agent_id, _end(turn, message.agent_id))
                        ended = True
                    yield frame
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await stored  # raises (no reply is stored) if the message could not be
                    if not ended:
                        await self._store.end_turn(message.agent_id, _end(turn, message.agent_id))
                finally:
                    await built.aclose()

    async def list(
        self, agent_id: str, after: str | None, limit: int, order: Order
    ) -> AgentMessagePage:
        await self._agents.stored(agent_id)
        page = await self._store.messages(agent_id, after, limit, order)
        if page is None:
            raise NotFoundError(f"No message found with id '{after}'.", param="after")
        return message_page([message_wire(row) for row in page.data], has_more=page.has_more)


def _message(agent_id: str, request: SendMessageRequest, status: str) -> MessageRow:
    return MessageRow(
        id=new_id("amsg"),
        agent_id=agent_id,
        direction="user_to_agent",
        content=request.content,
        mode=request.mode,
        status=status,
        created_at=time.time(),
    )


def _end(turn: TurnStream, agent_id: str) -> TurnEnd:
    used = turn.usage
    return TurnEnd(turn.reply(agent_id), used.input_tokens, used.output_tokens, time.time())
