"""The lean HTTP/1.1 client against a raw socket server that answers exactly what a test says."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace

import pytest

from agentloom.errors import UpstreamError
from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    Finish,
    ProviderConfig,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from agentloom.inference.http import (
    HTTPConnectError,
    HTTPProtocolError,
    HTTPTimeout,
    Origin,
    Pool,
    iter_sse_data,
)
from agentloom.inference.openai_compatible import OpenAICompatibleProvider

Answer = Callable[[bytes], list[bytes]]  # request bytes -> what to write (each piece flushed)


@dataclass
class RawServer:
    """Answers each request on a connection with ``answer``; closes after ``close_after``."""

    answer: Answer
    close_after: int | None = None
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while self.close_after is None or served < self.close_after:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                for piece in self.answer(request):
                    writer.write(piece)
                    await writer.drain()
                served += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def raw() -> AsyncIterator[Callable[..., Awaitable[RawServer]]]:
    servers: list[asyncio.Server] = []

    async def start(answer: Answer, close_after: int | None = None) -> RawServer:
        state = RawServer(answer, close_after)
        server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
        servers.append(server)
        state.port = server.sockets[0].getsockname()[1]
        return state

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


def pool(port: int, *, timeout: float = 2.0) -> Pool:
    origin = Origin.parse(f"http://127.0.0.1:{port}/v1")
    return Pool(origin, connect_timeout=timeout, read_timeout=timeout, headers={"X-Test": "1"})


def json_answer(body: bytes = b'{"ok": true}', status: str = "200 OK") -> Answer:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
    return lambda _: [f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body]


def chunked(*pieces: bytes) -> Answer:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    framed = [b"%x\r\n%s\r\n" % (len(p), p) for p in pieces]
    return lambda _: [head, *framed, b"0\r\n\r\n"]


async def test_request_line_headers_and_body(raw: Callable[..., Awaitable[RawServer]]) -> None:
    server = await raw(json_answer())
    client = pool(server.port)
    async with client.post("/chat/completions", b'{"a":1}') as response:
        assert response.status == 200
        assert await response.read() == b'{"ok": true}'
    await client.aclose()

    request = server.requests[0]
    assert request.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n".encode() in request
    assert b"X-Test: 1\r\n" in request
    assert request.endswith(b'\r\n\r\n{"a":1}')


async def test_a_root_path_skips_the_base_path(raw: Callable[..., Awaitable[RawServer]]) -> None:
    server = await raw(json_answer())
    client = pool(server.port)
    async with client.post("/tokenize", b"{}", root=True) as response:
        await response.read()
    async with client.post("/chat/completions", b"{}") as response:
        await response.read()
    await client.aclose()

    assert server.requests[0].startswith(b"POST /tokenize HTTP/1.1\r\n")
    assert server.requests[1].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")


async def test_connections_are_kept_alive_when_bodies_are_read(
    raw: Callable[..., Awaitable[RawServer]],
) -> None:
    server = await raw(chunked(b"data: 1\n\n", b"data: 2\n\n"))
    client = pool(server.port)
    for _ in range(3):
        async with client.post("/x", b"{}") as response:
            assert await response.read() == b"data: 1\n\ndata: 2\n\n"
    await client.aclose()
    assert server.connections == 1


async def test_an_unread_body_does_not_return_the_connection(
    raw: Callable[..., Awaitable[RawServer]],
) -> None:
    server = await raw(json_answer())
    client = pool(server.port)
    for _ in range(2):
        async with client.post("/x", b"{}") as response:
            assert response.status == 200
    await client.aclose()
    assert server.connections == 2


async def test_a_kept_alive_connection_closed_by_the_server_is_retried_once(
    raw: Callable[..., Awaitable[RawServer]],
) -> None:
    server = await raw(json_answer(), close_after=1)
    client = pool(server.port)
    for _ in range(2):
        async with client.post("/x", b"{}") as response:
            assert await response.read() == b'{"ok": true}'
    await client.aclose()
    assert server.connections == 2


async def test_a_body_cut_short_is_a_protocol_error(
    raw: Callable[..., Awaitable[RawServer]],
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
    server = await raw(lambda _: [head + b"only this"], close_after=1)
    client = pool(server.port)
    with pytest.raises(HTTPProtocolError):
        async with client.post("/x", b"{}") as response:
            await response.read()
    await client.aclose()


async def test_garbage_instead_of_a_status_line(raw: Callable[..., Awaitable[RawServer]]) -> None:
    server = await raw(lambda _: [b"SSH-2.0-OpenSSH\r\n\r\n"], close_after=1)
    client = pool(server.port)
    with pytest.raises(HTTPProtocolError, match="status line"):
        async with client.post("/x", b"{}"):
            pass
    await client.aclose()


async def test_silence_is_a_timeout(raw: Callable[..., Awaitable[RawServer]]) -> None:
    server = await raw(lambda _: [])
    client = pool(server.port, timeout=0.2)
    with pytest.raises(HTTPTimeout):
        async with client.post("/x", b"{}"):
            pass
    await client.aclose()


async def test_refused_connection() -> None:
    client = pool(1)
    with pytest.raises(HTTPConnectError):
        async with client.post("/x", b"{}"):
            pass


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h/v1", Origin("http", "h", 80, "/v1")),
        ("https://h:8443/", Origin("https", "h", 8443, "")),
        ("http://10.0.0.1:8000/v1/", Origin("http", "10.0.0.1", 8000, "/v1")),
    ],
)
def test_origin_parse(url: str, expected: Origin) -> None:
    assert Origin.parse(url) == expected


@pytest.mark.parametrize(
    ("url", "header"),
    [
        ("http://h/v1", "h"),
        ("http://h:8000/v1", "h:8000"),
        ("https://h:443/v1", "h"),
        ("http://[::1]:8000/v1", "[::1]:8000"),
    ],
)
def test_host_header(url: str, header: str) -> None:
    assert Origin.parse(url).host_header == header


def test_origin_rejects_other_schemes() -> None:
    with pytest.raises(ValueError, match="not an http"):
        Origin.parse("ftp://h/v1")


# --- server-sent events ----------------------------------------------------------------------


async def _pieces(*pieces: bytes) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


async def _data(*pieces: bytes) -> list[str]:
    return [data async for data in iter_sse_data(_pieces(*pieces))]


def _split_everywhere(stream: bytes) -> Iterator[tuple[bytes, bytes]]:
    for cut in range(len(stream) + 1):
        yield stream[:cut], stream[cut:]


async def test_sse_events_survive_any_split() -> None:
    stream = ': comment\r\nevent: x\r\ndata: {"a": "é"}\r\n\r\ndata:b\ndata: c\n\ndata: [DONE]\n\n'
    encoded = stream.encode()
    for left, right in _split_everywhere(encoded):
        assert await _data(left, right) == ['{"a": "é"}', "b\nc", "[DONE]"]


async def test_sse_last_event_without_blank_line() -> None:
    assert await _data(b"data: one\n\ndata: two") == ["one", "two"]


async def test_a_chunked_body_reads_the_same_however_it_is_split(
    raw: Callable[..., Awaitable[RawServer]],
) -> None:
    """The chunks a read completes are handed on together; every split of the bytes (a chunk's
    size line, its data, its CRLF, the last chunk and its trailer) gives the same body."""
    pieces = (b"data: 1\n\n", b"data: two\n\n", b"x" * 40)
    whole = b"".join(chunked(*pieces)(b""))
    server = await raw(lambda _: [whole])
    expected = b"".join(pieces)
    for cut in range(len(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), len(whole)):
        server.answer = lambda _, cut=cut: [whole[:cut], whole[cut:]]  # type: ignore[misc]
        client = pool(server.port)
        async with client.post("/x", b"{}") as response:
            assert await response.read() == expected
            assert response.complete
        await client.aclose()


def _sse_answer(*deltas: str) -> Answer:
    """A chat completion stream of ``deltas``, written in one piece (it arrives together)."""
    events = [{"choices": [{"index": 0, "delta": {"content": d}}]} for d in deltas]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    records = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events]
    whole = b"".join(chunked(*records, b"data: [DONE]\n\n")(b""))  # a chunk per event
    return lambda _: [whole]


async def test_a_streamed_answer_keeps_the_backends_pieces(
    raw: Callable[..., Awaitable[RawServer]],
) -> None:
    server = await raw(_sse_answer("Hel", "lo", "!"))
    config = ProviderConfig(name="raw", base_url=f"http://127.0.0.1:{server.port}/v1")
    provider = OpenAICompatibleProvider(config)
    request = ChatRequest(model="m", messages=(ChatMessage(role="user", content="Hi"),))
    try:
        chunks = [c async for c in provider.stream(request)]
    finally:
        await provider.aclose()
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["Hel", "lo", "!"]
    assert chunks[-1] == Finish("stop")
    assert b'"stream":true' in server.requests[0]


def _whole_answer(answer: object) -> Answer:
    body = json.dumps(answer).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    return lambda _: [head % len(body) + body]


async def test_a_collected_answer_is_asked_for_whole(
    raw: Callable[..., Awaitable[RawServer]],
) -> None:
    """No one sees a collected answer's deltas: it is asked for as one ``chat.completion``
    (``stream: false``), whose message makes the same chunks a stream of it would."""
    message = {
        "role": "assistant",
        "reasoning_content": "Think.",
        "content": "Hello!",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "[]"}},
        ],
    }
    usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    answer = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    server = await raw(_whole_answer({**answer, "usage": usage}))
    config = ProviderConfig(name="raw", base_url=f"http://127.0.0.1:{server.port}/v1")
    provider = OpenAICompatibleProvider(config)
    request = ChatRequest(model="m", messages=(ChatMessage(role="user", content="Hi"),))
    try:
        chunks = [c async for c in provider.stream(replace(request, collected=True))]
    finally:
        await provider.aclose()
    sent = json.loads(server.requests[0].split(b"\r\n\r\n", 1)[1])
    assert sent["stream"] is False
    assert "stream_options" not in sent
    assert chunks == [
        ReasoningDelta("Think."),
        TextDelta("Hello!"),
        ToolCallDelta(index=0, id="call_1", name="f", arguments="{}"),
        ToolCallDelta(index=1, id="call_2", name="g", arguments="[]"),
        Finish("tool_calls"),
        Usage(input_tokens=5, output_tokens=7),
    ]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"choices": 7}, "invalid chat completion"),
        ({"error": {"message": "overloaded", "code": "503"}}, "overloaded"),
        ("nope", "invalid chat completion"),
    ],
)
async def test_a_whole_answer_that_is_not_a_completion_is_an_upstream_error(
    raw: Callable[..., Awaitable[RawServer]], answer: object, message: str
) -> None:
    server = await raw(_whole_answer(answer))
    config = ProviderConfig(name="raw", base_url=f"http://127.0.0.1:{server.port}/v1")
    provider = OpenAICompatibleProvider(config)
    request = ChatRequest(model="m", messages=(ChatMessage(role="user", content="Hi"),))
    try:
        with pytest.raises(UpstreamError, match=message):
            _ = [c async for c in provider.stream(replace(request, collected=True))]
    finally:
        await provider.aclose()


@pytest.mark.parametrize("bad", [b"data: {not json\n\n", b'data: {"choices": 7}\n\n'])
async def test_what_came_before_a_bad_chunk_in_the_same_read_is_kept(
    raw: Callable[..., Awaitable[RawServer]], bad: bytes
) -> None:
    good = b'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n'
    whole = b"".join(chunked(good, bad)(b""))
    server = await raw(lambda _: [whole])
    config = ProviderConfig(name="raw", base_url=f"http://127.0.0.1:{server.port}/v1")
    provider = OpenAICompatibleProvider(config)
    request = ChatRequest(model="m", messages=(ChatMessage(role="user", content="Hi"),))
    chunks: list[object] = []

    async def read() -> None:
        async for chunk in provider.stream(request):
            chunks.append(chunk)

    try:
        with pytest.raises(UpstreamError, match="invalid stream chunk"):
            await read()
    finally:
        await provider.aclose()
    assert chunks == [TextDelta("Hel")]
