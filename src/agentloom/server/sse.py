"""Server-sent events: the one place where the event stream is framed for the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentloom.api.events import StreamEvent
from agentloom.errors import UpstreamError
from agentloom.server.errors import error_body
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


async def encode_relayed(
    batches: AsyncIterator[list[tuple[str | None, bytes]]],
) -> AsyncIterator[bytes]:
    """A passed-through Responses stream: each event's ``event:`` line (when its type is
    known) and its ``data:`` as the backend wrote it, those that arrived together in one
    write, ``[DONE]`` at the end (the relay ends a broken stream with an event of its own)."""
    async for batch in batches:
        yield b"".join(_relayed(kind, data) for kind, data in batch)
    yield DONE


def _relayed(kind: str | None, data: bytes) -> bytes:
    head = b"" if kind is None else b"event: " + kind.encode() + b"\n"
    return head + b"data: " + data + b"\n\n"


async def encode_data(batches: AsyncIterator[list[bytes]]) -> AsyncIterator[bytes]:
    """Chat Completions' framing: ``data:`` lines only, the payloads that arrived together in
    one write, ``[DONE]`` at the end. A failure after the stream began ends it with an
    ``error`` payload, as OpenAI's streams report one."""
    try:
        async for batch in batches:
            yield b"".join(b"data: " + payload + b"\n\n" for payload in batch)
    except UpstreamError as exc:
        yield b"data: " + error_body(exc) + b"\n\n"
        return
    yield DONE
