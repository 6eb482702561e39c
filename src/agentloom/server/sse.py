"""Server-sent events: the one place where the event stream is framed for the wire, and the
response that sends it (:class:`EventStream`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing

import anyio
import anyio.lowlevel
from starlette.background import BackgroundTask
from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from agentloom.api.events import ErrorEvent, StreamedError, StreamEvent
from agentloom.errors import AgentloomError, InternalError, UpstreamError
from agentloom.server.errors import INTERNAL_MESSAGE, error_body, status_and_type
from agentloom.services.managed_agents.stream import Frame
from agentloom.storage.events import StoredEvent

log = logging.getLogger(__name__)

DONE = b"data: [DONE]\n\n"
CHECKPOINT_EVERY = 32  # events sent between chances for other tasks (a disconnect) to run
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class EventStream(StreamingResponse):
    """An SSE response whose frames are closed when it ends, however it ends.

    Starlette cancels a stream whose client went away, but leaves its body iterator
    suspended, to be closed by the garbage collector: until then the response it streams is
    not finalised (stored ``cancelled``, its conversation released) and the backend's answer
    stays open. A client that stopped reading (the send waiting on flow control, outside the
    iterator) left it so every time; with the serving process's lazy collector, for minutes.

    A client that goes away stops the stream at once (the model call under way is cancelled):
    one plain task waits for the disconnect and cancels the streaming task. Starlette's own
    way (a task group running both) cost about 90 us of CPU per stream, a tenth of a short
    streamed response's.
    """

    def __init__(
        self, frames: AsyncGenerator[bytes, None], *, background: BackgroundTask | None = None
    ) -> None:
        super().__init__(
            frames, media_type="text/event-stream", headers=SSE_HEADERS, background=background
        )
        self._frames = frames

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        whole = False
        try:
            whole = await _until_disconnect(receive, self.stream_response(send_fairly(send)))
            if self.background is not None:
                await self.background()
        finally:
            if not whole:  # the frames did not run to their end (a shield costs ~5 us)
                with anyio.CancelScope(shield=True):
                    await self._frames.aclose()


async def _until_disconnect(receive: Receive, streaming: Awaitable[None]) -> bool:
    """``streaming``, cancelled if the client disconnects first (which ends it quietly);
    whether it ran to its end."""
    task = asyncio.current_task()
    assert task is not None, "a response is sent by a task"
    gone = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        task.cancel()  # delivered where the stream waits: it cannot outlive the try below

    watcher = asyncio.ensure_future(watch())
    try:
        await streaming
        return True
    except asyncio.CancelledError:
        if not gone or task.uncancel() > 0:
            raise  # cancelled by someone else too (the server shutting down)
        return False
    finally:
        watcher.cancel()


def send_fairly(send: Send) -> Send:
    """``send``, giving other tasks a turn every :data:`CHECKPOINT_EVERY` messages. Neither
    the send (once its client is gone) nor a read of a backend's buffered answer waits, so a
    fast stream would otherwise keep the event loop to itself: other requests stall, and the
    task that would see the client's disconnect never runs."""
    sent = 0

    async def sending(message: Message) -> None:
        nonlocal sent
        await send(message)
        sent += 1
        if sent % CHECKPOINT_EVERY == 0:
            await anyio.lowlevel.checkpoint()

    return sending


def encode_event(event: StreamEvent) -> bytes:
    """One SSE record: an ``event:`` line equal to the type, then the JSON ``data:`` line."""
    return _record(event.type, event.model_dump_json())


def _record(kind: str, body: str) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + body.encode() + b"\n\n"


async def encode_stream(events: AsyncIterator[StreamEvent]) -> AsyncGenerator[bytes, None]:
    """The events, then ``[DONE]``. A failure after the stream began (the headers are sent:
    no status can tell it) ends it with an ``error`` event, as OpenAI's streams report one,
    instead of a connection cut mid-record (then ``[DONE]``: the specification ends every
    stream so)."""
    sequence = -1
    try:
        async for event in events:
            sequence = event.sequence_number
            yield encode_event(event)
    except AgentloomError as exc:
        yield encode_event(_error_event(exc, sequence + 1)) + DONE
        return
    except Exception as exc:  # the edge's last resort, like the app's 500 handler
        log.exception("unhandled error in a /v1/responses stream", exc_info=exc)
        yield encode_event(_error_event(InternalError(INTERNAL_MESSAGE), sequence + 1)) + DONE
        return
    yield DONE


def _error_event(exc: AgentloomError, sequence: int) -> ErrorEvent:
    _, kind = status_and_type(exc)
    error = StreamedError(type=kind, code=exc.code, message=exc.stated(), param=exc.param)
    return ErrorEvent(
        sequence_number=sequence,
        code=error.code,
        message=error.message,
        param=error.param,
        error=error,
    )


async def encode_stored(events: AsyncIterator[StoredEvent]) -> AsyncGenerator[bytes, None]:
    """Events stored as JSON (a background response's), framed as they were made."""
    async for event in events:
        yield _record(event.type, event.body)
    yield DONE


async def encode_relayed(
    batches: AsyncIterator[list[tuple[str | None, bytes]]],
) -> AsyncGenerator[bytes, None]:
    """A passed-through Responses stream: each event's ``event:`` line (when its type is
    known) and its ``data:`` as the backend wrote it, those that arrived together in one
    write, ``[DONE]`` at the end (the relay ends a broken stream with an event of its own)."""
    async for batch in batches:
        yield b"".join(_relayed(kind, data) for kind, data in batch)
    yield DONE


def _relayed(kind: str | None, data: bytes) -> bytes:
    head = b"" if kind is None else b"event: " + kind.encode() + b"\n"
    return head + b"data: " + data + b"\n\n"


async def encode_data(batches: AsyncIterator[list[bytes]]) -> AsyncGenerator[bytes, None]:
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


async def encode_named(
    events: AsyncIterator[tuple[str, bytes]], error: Callable[[AgentloomError], bytes]
) -> AsyncGenerator[bytes, None]:
    """Anthropic's framing: each event's ``event:`` line and its ``data:``, no ``[DONE]``. A
    failure after the stream began ends it with an ``error`` event whose data ``error`` makes."""
    try:
        async for name, data in events:
            yield b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"
    except AgentloomError as exc:
        yield b"event: error\ndata: " + error(exc) + b"\n\n"


async def encode_frames(frames: AsyncGenerator[Frame, None]) -> AsyncGenerator[bytes, None]:
    """A managed agent's stream (:mod:`agentloom.services.managed_agents.stream`): each frame an
    ``event:`` line when it names one, then its ``data:`` line; the frames end with their own
    ``[DONE]``. A fault after the stream began ends it with an ``error`` payload."""
    async with aclosing(frames):
        try:
            async for frame in frames:
                head = b"event: " + frame.event.encode() + b"\n" if frame.event else b""
                yield head + b"data: " + frame.data.encode() + b"\n\n"
        except Exception as exc:  # the edge's last resort, like the app's 500 handler
            log.exception("unhandled error in a managed agent's stream", exc_info=exc)
            yield b"data: " + error_body(InternalError(INTERNAL_MESSAGE)) + b"\n\n" + DONE
