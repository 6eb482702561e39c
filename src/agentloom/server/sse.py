"""Server-sent events: the one place where the event stream is framed for the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentloom.api.events import StreamEvent

DONE = b"data: [DONE]\n\n"


def encode_event(event: StreamEvent) -> bytes:
    """One SSE record: an ``event:`` line equal to the type, then the JSON ``data:`` line."""
    return (
        b"event: " + event.type.encode() + b"\ndata: " + event.model_dump_json().encode() + b"\n\n"
    )


async def encode_stream(events: AsyncIterator[StreamEvent]) -> AsyncIterator[bytes]:
    async for event in events:
        yield encode_event(event)
    yield DONE
