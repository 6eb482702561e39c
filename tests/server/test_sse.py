"""The SSE response itself (:class:`agentloom.server.sse.EventStream`): what a disconnect, or
a cancellation from elsewhere, does to the stream under way."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import pytest
from starlette.background import BackgroundTask
from starlette.types import Message

from agentloom.server.sse import EventStream

SCOPE = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "method": "GET"}


class Peer:
    """The ASGI server's side: what was sent, and a disconnect to report on demand."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.gone = asyncio.Event()

    async def receive(self) -> Message:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body"]


def frames_until(stalled: asyncio.Event, seen: list[str]) -> AsyncGenerator[bytes, None]:
    """One frame, then a wait as for a slow model (``stalled`` set while it waits)."""

    async def frames() -> AsyncGenerator[bytes, None]:
        try:
            yield b"data: 1\n\n"
            stalled.set()
            await asyncio.sleep(3600)
            yield b"data: never\n\n"
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        finally:
            seen.append("closed")

    return frames()


async def test_a_whole_stream_is_sent_and_ends() -> None:
    async def frames() -> AsyncGenerator[bytes, None]:
        yield b"data: 1\n\n"
        yield b"data: 2\n\n"

    peer = Peer()
    await EventStream(frames())(SCOPE, peer.receive, peer.send)
    assert peer.sent[0]["type"] == "http.response.start"
    assert peer.bodies() == [b"data: 1\n\n", b"data: 2\n\n", b""]


async def test_a_disconnect_stops_the_stream_at_once_and_ends_quietly() -> None:
    peer, stalled, seen, ran = Peer(), asyncio.Event(), [], []
    stream = EventStream(
        frames_until(stalled, seen), background=BackgroundTask(lambda: ran.append(True))
    )
    sending = asyncio.ensure_future(stream(SCOPE, peer.receive, peer.send))
    await stalled.wait()
    peer.gone.set()
    await asyncio.wait_for(sending, 5)  # returns: the client's leaving is no error
    assert seen == ["cancelled", "closed"]  # the model call under way was cancelled
    assert peer.bodies() == [b"data: 1\n\n"]
    assert ran == [True]  # the response's background work still runs
    assert not sending.cancelled()


async def test_a_cancellation_from_elsewhere_is_not_swallowed() -> None:
    peer, stalled, seen = Peer(), asyncio.Event(), []
    sending = asyncio.ensure_future(
        EventStream(frames_until(stalled, seen))(SCOPE, peer.receive, peer.send)
    )
    await stalled.wait()
    sending.cancel()  # the server shutting down, say
    with pytest.raises(asyncio.CancelledError):
        await sending
    assert seen == ["cancelled", "closed"]


async def test_a_disconnect_and_a_cancellation_together_still_cancel() -> None:
    peer, stalled, seen = Peer(), asyncio.Event(), []
    sending = asyncio.ensure_future(
        EventStream(frames_until(stalled, seen))(SCOPE, peer.receive, peer.send)
    )
    await stalled.wait()
    peer.gone.set()
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
