"""Helpers shared by the inference tests."""

from __future__ import annotations

import asyncio
import json
import socket

from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    Provider,
    ToolCall,
    ToolCallDelta,
)

HANG_GUARD = 10.0  # a provider that hangs fails the test instead of blocking the suite


def closed_port_url() -> str:
    """A base URL nothing listens on: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def ask(text: str = "Hi") -> ChatRequest:
    """A one-message request; vary it with ``dataclasses.replace``."""
    return ChatRequest(model="fake-model", messages=(ChatMessage(role="user", content=text),))


async def collect(provider: Provider, request: ChatRequest | None = None) -> list[Chunk]:
    async with asyncio.timeout(HANG_GUARD):
        return [chunk async for chunk in provider.stream(request or ask())]


def assemble(chunks: list[Chunk]) -> list[ToolCall]:
    """Whole tool calls from deltas, checking that id and name arrive exactly once per call."""
    deltas: dict[int, list[ToolCallDelta]] = {}
    for chunk in chunks:
        if isinstance(chunk, ToolCallDelta):
            deltas.setdefault(chunk.index, []).append(chunk)
    return [_whole(deltas[index]) for index in sorted(deltas)]


def _whole(deltas: list[ToolCallDelta]) -> ToolCall:
    ids = [d.id for d in deltas if d.id is not None]
    names = [d.name for d in deltas if d.name is not None]
    assert len(ids) == 1, ids
    assert len(names) == 1, names
    return ToolCall(id=ids[0], name=names[0], arguments="".join(d.arguments for d in deltas))


def raw_chunk(delta: dict[str, object], finish_reason: str | None = None) -> str:
    """One chat completion chunk as the JSON text a backend sends on a ``data:`` line."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    chunk = {"id": "chatcmpl-raw", "object": "chat.completion.chunk", "created": 0}
    return json.dumps({**chunk, "model": "fake-model", "choices": [choice]})
