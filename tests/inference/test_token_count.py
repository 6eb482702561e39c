"""count_tokens: the model's tokenizer, then a one-token completion's usage, then the estimate.

Against the fake backend over real HTTP (vLLM's ``/tokenize`` served from the scripted model's
count, or not served at all), and against a stub server that answers each path with whatever a
misbehaving backend might send.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from agentloom.errors import AgentloomError, UpstreamError, UpstreamRequestError
from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    FilePart,
    FunctionSpec,
    HTTPClientKind,
    ImagePart,
    ProviderConfig,
    TextPart,
    TokenCount,
    TokenCountSetting,
    Usage,
)
from agentloom.inference.chat_body import chat_body
from agentloom.inference.counting import tokenize_path
from agentloom.inference.estimate import (
    FILE_TOKENS,
    IMAGE_TOKENS,
    REPLY_PRIMER_TOKENS,
    TOOLS_PREAMBLE_TOKENS,
    estimate_request,
    estimate_tokens,
)
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.inference.scripted import ScriptedModel, prompt_tokens, raise_error, usage
from agentloom.testing.backend import FakeBackend, serve
from tests.inference.support import HANG_GUARD, ask, closed_port_url, collect
from tests.plugins.backend import backend_config

WEATHER = FunctionSpec(
    name="get_weather",
    description="The current weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
FORTY = "x" * 40  # ten tokens for the scripted model


def with_tools(request: ChatRequest) -> ChatRequest:
    return dataclasses.replace(request, tools=(WEATHER,))


async def count(provider: OpenAICompatibleProvider, request: ChatRequest) -> TokenCount:
    async with asyncio.timeout(HANG_GUARD):
        return await provider.count_tokens(request)


@asynccontextmanager
async def opened(config: ProviderConfig) -> AsyncIterator[OpenAICompatibleProvider]:
    provider = OpenAICompatibleProvider(config)
    try:
        yield provider
    finally:
        await provider.aclose()


def counting(
    backend: FakeBackend, http_client: HTTPClientKind, setting: TokenCountSetting
) -> ProviderConfig:
    config = backend_config(backend, http_client=http_client)
    return dataclasses.replace(config, token_count=setting)


# --- tokenizer -------------------------------------------------------------------------------


async def test_the_tokenizer_counts_at_the_server_root(
    scripted: ScriptedModel, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    request = ask(FORTY)

    counted = await count(provider, request)

    assert counted == TokenCount(10, "tokenizer")
    messages = chat_body(request)["messages"]
    assert backend.tokenize_requests == [
        {"model": "fake-model", "messages": messages, "add_generation_prompt": True}
    ]
    assert backend.tokenize_chat_requests == [request]
    assert backend.requests == []  # nothing generated
    assert scripted.requests == []


async def test_tools_are_rendered_into_the_count(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    request = with_tools(ask(FORTY))

    without, counted = await count(provider, ask(FORTY)), await count(provider, request)

    assert counted == TokenCount(prompt_tokens(request), "tokenizer")
    assert counted.tokens > without.tokens
    assert backend.tokenize_requests[-1]["tools"] == chat_body(request)["tools"]


async def test_a_base_url_without_v1_tokenizes_at_the_root_too(
    backend: FakeBackend, http_client: HTTPClientKind
) -> None:
    config = backend_config(backend, http_client=http_client)
    bare = dataclasses.replace(config, base_url=backend.base_url.removesuffix("/v1") + "/")

    async with opened(bare) as provider:
        assert await count(provider, ask(FORTY)) == TokenCount(10, "tokenizer")


def test_the_tokenize_path_replaces_a_trailing_v1() -> None:
    assert tokenize_path("/v1") == "/tokenize"
    assert tokenize_path("/v1/") == "/tokenize"
    assert tokenize_path("") == "/tokenize"
    assert tokenize_path("/proxy/vllm/v1") == "/proxy/vllm/tokenize"
    assert tokenize_path("/openai") == "/openai/tokenize"


# --- usage -----------------------------------------------------------------------------------


async def test_without_tokenize_a_one_token_completion_counts(
    scripted: ScriptedModel, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    backend.tokenize = False
    request = with_tools(ask(FORTY))

    counted = await count(provider, request)

    assert counted == TokenCount(prompt_tokens(request), "usage")
    sent = backend.last_request
    assert sent["stream"] is False
    assert sent["max_tokens"] == 1
    assert "stream_options" not in sent
    assert sent["messages"] == chat_body(request)["messages"]
    assert sent["tools"] == chat_body(request)["tools"]
    assert len(scripted.requests) == 1


async def test_a_backend_without_tokenize_is_not_asked_again(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    backend.tokenize = False

    first = await count(provider, ask(FORTY))
    second = await count(provider, ask(FORTY))

    assert first == second == TokenCount(10, "usage")
    assert len(backend.tokenize_requests) == 1
    assert len(backend.requests) == 2


async def test_no_usage_reported_means_an_estimate(
    scripted: ScriptedModel, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    backend.tokenize = False
    scripted.add_turn("ok", usage(0, 0))
    request = ask(FORTY)

    assert await count(provider, request) == TokenCount(estimate_request(request), "estimate")


async def test_a_failing_completion_means_an_estimate(
    scripted: ScriptedModel, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    backend.tokenize = False
    scripted.add_turn(raise_error(UpstreamError("the model crashed")))
    request = ask(FORTY)

    assert await count(provider, request) == TokenCount(estimate_request(request), "estimate")
    assert len(backend.requests) == 1


async def test_an_unreachable_backend_is_estimated(http_client: HTTPClientKind) -> None:
    config = ProviderConfig(name="gone", base_url=closed_port_url(), http_client=http_client)

    async with opened(config) as provider:
        counted = await count(provider, ask(FORTY))

    assert counted == TokenCount(estimate_request(ask(FORTY)), "estimate")


# --- forced methods --------------------------------------------------------------------------


async def test_estimate_never_calls_the_backend(
    backend: FakeBackend, http_client: HTTPClientKind
) -> None:
    async with opened(counting(backend, http_client, "estimate")) as provider:
        counted = await count(provider, with_tools(ask(FORTY)))

    assert counted == TokenCount(estimate_request(with_tools(ask(FORTY))), "estimate")
    assert backend.tokenize_requests == []
    assert backend.requests == []


async def test_usage_skips_the_tokenizer(backend: FakeBackend, http_client: HTTPClientKind) -> None:
    async with opened(counting(backend, http_client, "usage")) as provider:
        counted = await count(provider, ask(FORTY))

    assert counted == TokenCount(10, "usage")
    assert backend.tokenize_requests == []


async def test_forced_usage_without_usage_is_an_upstream_error(
    scripted: ScriptedModel, backend: FakeBackend, http_client: HTTPClientKind
) -> None:
    scripted.add_turn("ok", usage(0, 0))
    scripted.add_turn(raise_error(UpstreamRequestError("bad request", status=400)))

    async with opened(counting(backend, http_client, "usage")) as provider:
        with pytest.raises(UpstreamError, match=r"reported no usage\.prompt_tokens"):
            await count(provider, ask(FORTY))
        with pytest.raises(UpstreamRequestError, match="bad request"):
            await count(provider, ask(FORTY))


async def test_forced_tokenize_counts_with_the_tokenizer(
    backend: FakeBackend, http_client: HTTPClientKind
) -> None:
    async with opened(counting(backend, http_client, "tokenize")) as provider:
        assert await count(provider, ask(FORTY)) == TokenCount(10, "tokenizer")


async def test_forced_tokenize_without_tokenize_is_an_upstream_error_remembered(
    backend: FakeBackend, http_client: HTTPClientKind
) -> None:
    backend.tokenize = False

    async with opened(counting(backend, http_client, "tokenize")) as provider:
        for _ in range(2):
            with pytest.raises(UpstreamError, match="no vLLM-style /tokenize endpoint"):
                await count(provider, ask(FORTY))

    assert len(backend.tokenize_requests) == 1
    assert backend.requests == []


# --- misbehaving backends --------------------------------------------------------------------

STALL: int = 0  # a status that makes the stub go silent instead of answering


@dataclass
class Stub:
    """Answers each path with a fixed (status, content type, body); records paths and headers."""

    answers: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        while (await receive()).get("more_body", False):
            pass
        self.hits.append(scope["path"])
        self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        status, kind, body = self.answers.get(scope["path"], (404, "application/json", b"{}"))
        if status == STALL:
            await asyncio.sleep(30)
        head = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def _served_stub() -> Iterator[Stub]:
    stub = Stub()
    with serve(stub.app, lifespan=False) as base_url:
        stub.base_url = base_url
        yield stub


@pytest.fixture
def stub(_served_stub: Stub) -> Stub:
    _served_stub.answers = {}
    _served_stub.hits = []
    _served_stub.headers = []
    return _served_stub


def stub_config(stub: Stub, http_client: HTTPClientKind, **changes: object) -> ProviderConfig:
    config = ProviderConfig(name="stub", base_url=stub.base_url, timeout=1.0, connect_timeout=1.0)
    return dataclasses.replace(config, http_client=http_client, **changes)


def answer(value: object, status: int = 200) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(value).encode()


def completion(prompt_tokens: object) -> tuple[int, str, bytes]:
    return answer({"choices": [], "usage": {"prompt_tokens": prompt_tokens}})


ERROR = answer({"error": {"message": "no", "type": "server_error"}}, 500)
NOT_JSON = (200, "application/json", b"{not json")
TEXT = (200, "text/plain", b"12")
ESTIMATE = TokenCount(estimate_request(ask(FORTY)), "estimate")


@pytest.mark.parametrize(
    ("tokenize", "chat", "expected"),
    [
        (
            answer({"count": 7, "max_model_len": 4096, "tokens": []}),
            ERROR,
            TokenCount(7, "tokenizer"),
        ),
        (answer({"tokens": []}), completion(9), TokenCount(9, "usage")),  # llama.cpp
        (answer({"error": "no"}, 405), completion(9), TokenCount(9, "usage")),
        (answer({"error": "no"}, 501), completion(9), TokenCount(9, "usage")),
        (answer({"count": "7"}), completion(9), TokenCount(9, "usage")),
        (answer({"count": True}), completion(9), TokenCount(9, "usage")),
        (NOT_JSON, completion(9), TokenCount(9, "usage")),
        (TEXT, completion(9), TokenCount(9, "usage")),
        (answer({"error": {"message": "slow down"}}, 429), completion(9), TokenCount(9, "usage")),
        (answer({"error": {"message": "bad"}}, 400), completion(9), TokenCount(9, "usage")),
        (ERROR, completion(9), TokenCount(9, "usage")),
        (ERROR, ERROR, ESTIMATE),
        (ERROR, NOT_JSON, ESTIMATE),
        (ERROR, TEXT, ESTIMATE),
        (ERROR, answer([1, 2]), ESTIMATE),
        (ERROR, completion("9"), ESTIMATE),
        (ERROR, completion(None), ESTIMATE),
        (ERROR, answer({"choices": []}), ESTIMATE),
        (ERROR, answer({"error": {"message": "maximum context length exceeded"}}, 400), ESTIMATE),
        (ERROR, answer({"error": {"message": "slow down"}}, 429), ESTIMATE),
    ],
)
async def test_auto_always_answers_with_a_count(
    stub: Stub,
    http_client: HTTPClientKind,
    tokenize: tuple[int, str, bytes],
    chat: tuple[int, str, bytes],
    expected: TokenCount,
) -> None:
    stub.answers = {"/tokenize": tokenize, "/v1/chat/completions": chat}

    async with opened(stub_config(stub, http_client)) as provider:
        assert await count(provider, ask(FORTY)) == expected


async def test_unsupported_answers_are_remembered_and_failures_are_not(
    stub: Stub, http_client: HTTPClientKind
) -> None:
    stub.answers = {"/tokenize": ERROR, "/v1/chat/completions": completion(9)}

    async with opened(stub_config(stub, http_client)) as provider:
        await count(provider, ask(FORTY))
        await count(provider, ask(FORTY))  # a 500 may pass: /tokenize is tried again
        stub.answers["/tokenize"] = answer({"tokens": []})
        await count(provider, ask(FORTY))
        await count(provider, ask(FORTY))  # no count: not tried again

    assert stub.hits.count("/tokenize") == 3
    assert stub.hits.count("/v1/chat/completions") == 4


async def test_a_silent_backend_is_not_asked_twice(stub: Stub, http_client: HTTPClientKind) -> None:
    stub.answers = {"/tokenize": (STALL, "application/json", b""), "/v1/chat/completions": ERROR}
    config = stub_config(stub, http_client, timeout=0.2)

    async with opened(config) as provider:
        assert await count(provider, ask(FORTY)) == ESTIMATE

    assert stub.hits == ["/tokenize"]


async def test_counting_sends_the_api_key(stub: Stub, http_client: HTTPClientKind) -> None:
    stub.answers = {"/tokenize": answer({"tokens": []}), "/v1/chat/completions": completion(9)}

    async with opened(stub_config(stub, http_client, api_key="sk-count")) as provider:
        await count(provider, ask(FORTY))

    assert [h["authorization"] for h in stub.headers] == ["Bearer sk-count"] * 2
    assert all(h["content-type"] == "application/json" for h in stub.headers)


@pytest.mark.parametrize("setting", ["tokenize", "usage"])
async def test_forced_methods_raise_only_agentloom_errors(
    stub: Stub, http_client: HTTPClientKind, setting: TokenCountSetting
) -> None:
    stub.answers = {"/tokenize": NOT_JSON, "/v1/chat/completions": NOT_JSON}

    async with opened(stub_config(stub, http_client, token_count=setting)) as provider:
        with pytest.raises(AgentloomError):
            await count(provider, ask(FORTY))


# --- the fake backend's /tokenize ------------------------------------------------------------


async def test_the_fake_backend_tokenizes_at_the_root_only(backend: FakeBackend) -> None:
    root = backend.base_url.removesuffix("/v1")
    body = {"model": "m", "messages": [{"role": "user", "content": FORTY}]}

    async with httpx2.AsyncClient() as client:
        served = await client.post(f"{root}/tokenize", json=body)
        under_v1 = await client.post(f"{root}/v1/tokenize", json=body)
        backend.tokenize = False
        refused = await client.post(f"{root}/tokenize", json=body)

    assert served.status_code == 200
    assert served.json() == {"count": 10, "max_model_len": None, "tokens": []}
    assert under_v1.status_code == 404
    assert refused.status_code == 404
    assert len(backend.tokenize_requests) == 2  # /v1/tokenize is no tokenize request
    assert backend.requests == []


async def test_the_fake_backend_reports_the_context_window(backend: FakeBackend) -> None:
    backend.reset(ScriptedModel(models=("m",), context_window=8192))
    root = backend.base_url.removesuffix("/v1")
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}

    async with httpx2.AsyncClient() as client:
        answered = await client.post(f"{root}/tokenize", json=body)
        broken = await client.post(f"{root}/tokenize", json={"messages": "no"})

    assert answered.json()["max_model_len"] == 8192
    assert broken.status_code == 400


def test_reset_serves_tokenize_again(backend: FakeBackend) -> None:
    backend.tokenize = False
    backend.reset()

    assert backend.tokenize is True
    assert FakeBackend(ScriptedModel(), tokenize=False).tokenize is False


# --- the scripted model ----------------------------------------------------------------------


async def test_the_scripted_count_is_its_usage_rule() -> None:
    model = ScriptedModel()
    plain, tooled = ask(FORTY), with_tools(ask(FORTY))

    chunks = await collect(model, tooled)

    assert await model.count_tokens(plain) == TokenCount(10, "tokenizer")
    assert await model.count_tokens(tooled) == TokenCount(prompt_tokens(tooled), "tokenizer")
    assert prompt_tokens(tooled) > 10
    usage_chunk = chunks[-1]
    assert isinstance(usage_chunk, Usage)
    assert usage_chunk.input_tokens == prompt_tokens(tooled)
    assert model.requests == [tooled]  # counting is not a turn


# --- the estimate ----------------------------------------------------------------------------


def test_the_estimate_counts_tool_definitions() -> None:
    plain, tooled = ask(FORTY), with_tools(ask(FORTY))
    tools = chat_body(tooled)["tools"]
    assert isinstance(tools, list)

    extra = estimate_request(tooled) - estimate_request(plain)

    assert extra == TOOLS_PREAMBLE_TOKENS + len(json.dumps(tools[0])) // 4
    assert estimate_request(plain) == estimate_tokens(plain.messages) + REPLY_PRIMER_TOKENS


def test_the_estimate_counts_images_and_files_roughly() -> None:
    parts = (
        TextPart(FORTY),
        ImagePart("https://example.com/a.png", detail="low"),
        ImagePart("data:image/png;base64,AAAA"),
        FilePart(filename="a.pdf", data="data:application/pdf;base64,AAAA"),
    )
    message = ChatMessage(role="user", content=parts)

    assert estimate_tokens([message]) == 10 + 85 + IMAGE_TOKENS["auto"] + FILE_TOKENS + 4
