"""Server-sent events: the one place where the event stream is framed for the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentloom.api.events import StreamEvent
from agentloom.storage.events import StoredEvent

DONE = b"data: [DONE]\n\n"


def encode_event(event: StreamEvent) -> bytes:
    """One SSE record: an ``event:`` line equal to the type, then the JSON ``data:`` line."""
    return _record(event.type, event.model_dump_json())


def _record(kind: str, body: str) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + body.encode() + b"\n\n"


async def encode_stream(events: AsyncIterator[StreamEvent]) -> AsyncIterator[bytes]:
    async for event in events:
        yield encode_event(event)
    yield DONE


async def encode_stored(events: AsyncIterator[StoredEvent]) -> AsyncIterator[bytes]:
    """Events stored as JSON (a background response's), framed as they were made."""
    async for event in events:
        yield _record(event.type, event.body)
    yield DONE
