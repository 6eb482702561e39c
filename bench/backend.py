"""A fast fake OpenAI-compatible backend for the benchmark: fixed answers, no model.

It answers ``POST /v1/chat/completions`` (streamed or not) with a fixed sentence (a longer story
when asked for one, ``safe`` to a Llama Guard prompt), or with one function call when the
request offers tools and the last message is not a tool result, and
``GET /v1/models`` with one model. It also stands in for a SearXNG instance for ``web_search``:
``GET /search?q=...&format=json`` answers two fixed results in SearXNG's JSON shape, and for an
OpenTelemetry collector: ``POST /v1/traces`` takes the spans and drops them. It does as
little as possible so that the benchmark measures agentloom, not the fake: run with
``python -m bench.backend --port PORT``.

``--delay-ms D`` paces it like a (very fast) model instead: half of ``D`` before the first token,
the rest spread over the tokens. Requests are served concurrently, as a batching server would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

import uvicorn

MODEL = "bench-model"
WORDS = ["Hello", "!", " How", " can", " I", " help", " you", " today", "?"]
STORY = "Tell me a story."
STORY_TEXT = (
    "Once upon a time a small kettle lived on a windowsill by the sea. Every morning it boiled "
    "water for the lighthouse keeper, who drank his tea while counting the boats coming home. "
    "One foggy night the lamp went out, and the kettle whistled so loudly that every boat found "
    "the harbour. The keeper never forgot it."
)
STORY_WORDS = [f"{word} " for word in STORY_TEXT.split()]  # streamed a word a chunk
GUARD_PROMPT = "<BEGIN CONVERSATION>"  # what a Llama Guard shield's prompt holds: answered "safe"
USAGE = {"prompt_tokens": 12, "completion_tokens": len(WORDS), "total_tokens": 12 + len(WORDS)}
CALL = {"id": "call_bench", "type": "function"}
TOOL_CALL = {**CALL, "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
# The arguments the server-side tools are called with (any other tool: TOOL_CALL).
SERVER_TOOL_ARGUMENTS = {
    "file_search": '{"queries": ["warranty"]}',
    "code_interpreter": '{"code": "print(1)"}',
    "web_search": '{"query": "agentloom"}',
}
SEARXNG_RESULTS = [
    {
        "url": "https://agentloom.example.com/",
        "title": "agentloom",
        "content": "An OpenAI-compatible Responses API server.",
        "engine": "bench",
    },
    {
        "url": "https://docs.example.org/agentloom",
        "title": "agentloom <b>docs</b>",
        "content": "How to run agentloom with a local model.",
        "engine": "bench",
    },
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


def _head(chunk: bool) -> dict[str, object]:
    kind = "chat.completion.chunk" if chunk else "chat.completion"
    return {"id": "chatcmpl-bench", "object": kind, "created": 0, "model": MODEL}


def _wants_tool(request: dict[str, Any]) -> bool:
    messages = request.get("messages") or [{}]
    return bool(request.get("tools")) and messages[-1].get("role") != "tool"


def _tool_call(request: dict[str, Any]) -> dict[str, object]:
    """A call of the first tool offered (a server-side tool gets fitting arguments)."""
    offered = request["tools"][0].get("function", {}).get("name")
    if offered not in SERVER_TOOL_ARGUMENTS:
        return dict(TOOL_CALL)
    return {**CALL, "function": {"name": offered, "arguments": SERVER_TOOL_ARGUMENTS[offered]}}


def _words(request: dict[str, Any]) -> list[str]:
    """What the answer says: ``safe`` to a Llama Guard prompt, a story when asked, else WORDS."""
    last = (request.get("messages") or [{}])[-1].get("content")
    if isinstance(last, str) and GUARD_PROMPT in last:
        return ["safe"]
    return STORY_WORDS if last == STORY else WORDS


def completion(request: dict[str, Any]) -> bytes:
    if _wants_tool(request):
        message: dict[str, object] = {"role": "assistant", "content": None}
        message["tool_calls"] = [_tool_call(request)]
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": "".join(_words(request))}
        finish = "stop"
    choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
    return json.dumps({**_head(False), "choices": [choice], "usage": USAGE}).encode()


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
    return b"data: " + json.dumps({**_head(True), "choices": [choice]}).encode() + b"\n\n"


def stream_events(request: dict[str, Any]) -> list[bytes]:
    if _wants_tool(request):
        call = {"index": 0, **_tool_call(request)}
        events = [_event({"role": "assistant", "tool_calls": [call]})]
        events.append(_event({}, "tool_calls"))
    else:
        events = [_event({"role": "assistant", "content": ""})]
        events += [_event({"content": word}) for word in _words(request)]
        events.append(_event({}, "stop"))
    usage = {**_head(True), "choices": [], "usage": USAGE}
    events.append(b"data: " + json.dumps(usage).encode() + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


Headers = list[tuple[bytes, bytes]]


async def _respond(send: Send, status: int, headers: Headers, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _pause(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)


async def _chat(receive: Receive, send: Send, delay: float) -> None:
    request = json.loads(await _body(receive))
    if not request.get("stream"):
        await _pause(delay)
        await _respond(send, 200, JSON_HEADERS, completion(request))
        return
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    events = stream_events(request)
    start = asyncio.get_running_loop().time()
    step = delay / 2 / len(events)
    for number, event in enumerate(events):
        # deadlines from the start, so sleeps that overshoot do not add up
        await _pause(start + delay / 2 + number * step - asyncio.get_running_loop().time())
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


def create_app(delay: float = 0.0) -> ASGIApp:
    """The backend's ASGI app, answering after ``delay`` seconds."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await _route(scope, receive, send, delay)

    return app


async def _route(scope: Scope, receive: Receive, send: Send, delay: float) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/v1/chat/completions":
        await _chat(receive, send, delay)
    elif path == "/search":
        query = parse_qs(scope["query_string"].decode()).get("q", [""])[0]
        body = {"query": query, "number_of_results": 2, "results": SEARXNG_RESULTS}
        await _respond(send, 200, JSON_HEADERS, json.dumps(body).encode())
    elif path == "/v1/traces":  # an OTLP/HTTP collector's receiver: spans read and dropped
        await _body(receive)
        await _respond(send, 200, [(b"content-type", b"application/x-protobuf")], b"")
    elif path == "/v1/models":
        models = {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "bench"}]}
        await _respond(send, 200, JSON_HEADERS, json.dumps(models).encode())
    else:
        await _respond(send, 404, JSON_HEADERS, b'{"error": {"message": "not found"}}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    app = create_app(args.delay_ms / 1000)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
