"""Server-sent events: the one place where the event stream is framed for the wire."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from agentloom.api.events import ErrorEvent, StreamEvent
from agentloom.errors import AgentloomError, InternalError, UpstreamError
from agentloom.server.errors import INTERNAL_MESSAGE, error_body
from agentloom.storage.events import StoredEvent

log = logging.getLogger(__name__)

DONE = b"data: [DONE]\n\n"


def encode_event(event: StreamEvent) -> bytes:
    """One SSE record: an ``event:`` line equal to the type, then the JSON ``data:`` line."""
    return _record(event.type, event.model_dump_json())


def _record(kind: str, body: str) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + body.encode() + b"\n\n"


async def encode_stream(events: AsyncIterator[StreamEvent]) -> AsyncIterator[bytes]:
    """The events, then ``[DONE]``. A failure after the stream began (the headers are sent:
    no status can tell it) ends it with an ``error`` event, as OpenAI's streams report one,
    instead of a connection cut mid-record."""
    sequence = -1
    try:
        async for event in events:
            sequence = event.sequence_number
            yield encode_event(event)
    except AgentloomError as exc:
        yield encode_event(_error_event(exc, sequence + 1))
        return
    except Exception as exc:  # the edge's last resort, like the app's 500 handler
        log.exception("unhandled error in a /v1/responses stream", exc_info=exc)
        yield encode_event(_error_event(InternalError(INTERNAL_MESSAGE), sequence + 1))
        return
    yield DONE


def _error_event(exc: AgentloomError, sequence: int) -> ErrorEvent:
    return ErrorEvent(
        sequence_number=sequence, code=exc.code, message=exc.stated(), param=exc.param
    )


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
