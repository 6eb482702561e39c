"""A passed-through Responses stream handed on to the client (see
:mod:`agentloom.responses.gateway`).

Each event goes on as the backend wrote it, a network read at a time, with its ``type`` (for
the ``event:`` line) read from the front of its payload. Only the few events that carry the
whole response (``response.created`` ... ``response.completed``) are decoded: to write the
model id the client used back into them, to keep the latest state, and to store the final one
*before* the terminal event is released (a client reacting to ``response.completed`` finds it).

A failure after the stream began ends it with ``response.failed`` (the last state the backend
sent, failed, and stored so), or with an ``error`` event when no state came yet; a backend that
stops without a terminal event fails the same way. A client that goes away leaves the response
stored as ``cancelled``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

import anyio

from agentloom import json_codec
from agentloom.errors import UpstreamError
from agentloom.inference.base import Usage
from agentloom.responses.gateway import NativeCall, ResponsesGateway, usage_of

Relayed = tuple[str | None, bytes]  # an event's type (None: unknown) and its data
_CARRIES_RESPONSE = frozenset(
    {
        "response.created",
        "response.queued",
        "response.in_progress",
        "response.completed",
        "response.failed",
        "response.incomplete",
    }
)
_TERMINAL = frozenset({"response.completed", "response.failed", "response.incomplete"})
_TYPE_KEY = '"type":"'
_FRONT = 64  # characters of a payload searched for its type


class Relay:
    def __init__(self, gateway: ResponsesGateway, call: NativeCall) -> None:
        self._gateway = gateway
        self._call = call
        self._latest: dict[str, object] | None = None  # the last state the backend sent
        self._sent = 0  # events handed on: the next one's sequence number
        self._usage: Usage | None = None
        self._ended = False

    async def events(
        self, first: list[str], rest: AsyncIterator[list[str]]
    ) -> AsyncGenerator[list[Relayed], None]:
        """The events, a network read at a time, from the backend's ``first`` read on."""
        try:
            async with aclosing(rest):  # type: ignore[type-var]
                batch: list[str] | None = first
                while batch is not None:
                    if batch:
                        yield [await self._event(data) for data in batch]
                    batch = await anext(rest, None)
            if not self._ended:
                stopped = UpstreamError("the inference backend ended the stream too early")
                yield [await self._failed(stopped)]
        except UpstreamError as exc:
            if not self._ended:
                yield [await self._failed(exc)]
        finally:
            if not self._ended:
                await self._abandoned()
            self._gateway.record(self._call, self._usage)

    async def _event(self, data: str) -> Relayed:
        self._sent += 1
        data = json_codec.finite(data)
        kind = _type_of(data)
        if kind not in _CARRIES_RESPONSE:
            return kind, data.encode()
        event = json_codec.loads(data)
        response = event.get("response") if isinstance(event, dict) else None
        if not isinstance(response, dict):
            return kind, data.encode()
        self._latest = self._call.written_back(response)
        if kind in _TERMINAL:
            self._usage = usage_of(response)
            await self._gateway.keep(self._call, response)
            self._ended = True
        return kind, json_codec.dumps(event) if self._call.renamed else data.encode()

    async def _failed(self, exc: UpstreamError) -> Relayed:
        """The event that ends a stream the backend broke off (stored as failed first)."""
        self._ended = True
        if self._latest is None:
            error = {"code": exc.code, "message": exc.stated(), "param": exc.param}
            return "error", json_codec.dumps(
                {"type": "error", "sequence_number": self._sent, **error}
            )
        failed = {
            **self._latest,
            "status": "failed",
            "error": {"code": exc.code or "server_error", "message": exc.stated()},
        }
        await self._gateway.keep(self._call, failed)
        event = {"type": "response.failed", "sequence_number": self._sent, "response": failed}
        return "response.failed", json_codec.dumps(event)

    async def _abandoned(self) -> None:
        """The client went away before the end: the last state stored as cancelled."""
        if self._latest is None:
            return
        with anyio.CancelScope(shield=True):
            await self._gateway.keep(self._call, {**self._latest, "status": "cancelled"})


def _type_of(data: str) -> str | None:
    """The event's ``type``: read from the front of the payload when it is there at the top
    level (OpenAI's events start with it, agentloom's after ``sequence_number``), else decoded."""
    at = data.find(_TYPE_KEY, 0, _FRONT)
    if at > 0 and "{" not in data[1:at] and "[" not in data[1:at]:
        start = at + len(_TYPE_KEY)
        end = data.find('"', start)
        if end > start:
            return data[start:end]
    try:
        event = json_codec.loads(data)
    except ValueError:
        return None
    kind = event.get("type") if isinstance(event, dict) else None
    return kind if isinstance(kind, str) else None
