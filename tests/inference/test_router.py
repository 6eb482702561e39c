"""The model router: least busy deployment for its weight first (weighted round robin on ties),
failover before the first chunk with a cooldown, fallbacks, no retry of a refused request or of
a started answer; real providers against fake backends over HTTP, the routed model found through
the real catalog."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing

import pytest

from agentloom.errors import (
    ContextLengthExceededError,
    InvalidRequestError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.inference.base import (
    HTTPClientKind,
    ModelInfo,
    Provider,
    ProviderConfig,
    TextDelta,
    chat_completions_of,
    native_responses_of,
)
from agentloom.inference.catalog import ModelCatalog, Resolved
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.inference.router import Deployment, RouteConfig, RoutedModel
from agentloom.inference.scripted import ScriptedModel, break_stream, delay, text
from agentloom.testing.backend import FakeBackend
from tests.inference.support import HANG_GUARD, ask, closed_port_url, collect
from tests.replicas import Clock, failing, fake_backends

TIMEOUT = 0.5  # seconds of backend silence before a provider gives up
COOLDOWN = 30.0
CHAT = RouteConfig(
    "chat",
    (Deployment("a", "model-a"), Deployment("b", "model-b")),
    fallbacks=("small",),
    cooldown=COOLDOWN,
)


@pytest.fixture(scope="module")
def _served() -> Iterator[list[FakeBackend]]:
    with fake_backends(3) as backends:
        yield backends


@pytest.fixture
def backends(_served: list[FakeBackend]) -> list[FakeBackend]:
    """Backends ``a``, ``b`` (the deployments of ``chat``) and ``c`` (its fallback ``small``)."""
    for backend in _served:
        backend.reset(ScriptedModel())
    return _served


@pytest.fixture
def clock() -> Clock:
    return Clock()


class Router:
    """A catalog over providers ``a``, ``b``, ``c`` and ``down`` (nothing listens there) with
    routed models, and what each backend received."""

    def __init__(
        self, backends: list[FakeBackend], clock: Clock, http_client: HTTPClientKind
    ) -> None:
        self.a, self.b, self.c = backends
        urls = {"a": self.a.base_url, "b": self.b.base_url, "c": self.c.base_url}
        urls["down"] = closed_port_url()
        models = {"a": "model-a", "b": "model-b", "c": "small", "down": "model-down"}
        self.configs = {
            name: _config(name, url, models[name], http_client) for name, url in urls.items()
        }
        self.providers: dict[str, Provider] = {
            name: OpenAICompatibleProvider(config) for name, config in self.configs.items()
        }
        self.catalog = ModelCatalog(self.providers, self.configs)
        self.clock = clock

    def route(self, *configs: RouteConfig) -> RoutedModel:
        """Serve ``configs``; the first one's routed model."""
        routed = {
            c.id: RoutedModel(c, self.providers, self.catalog.lookup, clock=self.clock)
            for c in configs
        }
        self.catalog.route(routed)
        return routed[configs[0].id]

    def served(self) -> list[str]:
        """The model each chat request went to, in order, whichever backend took it."""
        received = [*self.a.requests, *self.b.requests, *self.c.requests]
        return [str(r["model"]) for r in received]

    async def aclose(self) -> None:
        for provider in self.providers.values():
            await provider.aclose()


def _config(name: str, url: str, model: str, http_client: HTTPClientKind) -> ProviderConfig:
    return ProviderConfig(
        name=name,
        base_url=url,
        models=(model,),
        discover=False,
        timeout=TIMEOUT,
        connect_timeout=TIMEOUT,
        http_client=http_client,
    )


@pytest.fixture
async def router(backends: list[FakeBackend], clock: Clock) -> AsyncIterator[Router]:
    built = Router(backends, clock, "lean")
    yield built
    await built.aclose()


def _text(chunks: object) -> str:
    assert isinstance(chunks, list)
    return "".join(c.text for c in chunks if isinstance(c, TextDelta))


async def _read_into(seen: list[str], model: Provider) -> None:
    async with asyncio.timeout(HANG_GUARD):
        async for chunk in model.stream(ask()):
            seen.append(_text([chunk]))


async def _answers(model: Provider, count: int) -> list[str]:
    return [_text(await collect(model, ask(f"call {i}"))) for i in range(count)]


# --- load balancing --------------------------------------------------------------------------


async def test_idle_deployments_take_turns(router: Router) -> None:
    chat = router.route(CHAT)

    answers = await _answers(chat, 4)

    assert answers == ["call 0", "call 1", "call 2", "call 3"]
    assert [r["model"] for r in router.a.requests] == ["model-a", "model-a"]
    assert [r["model"] for r in router.b.requests] == ["model-b", "model-b"]


async def test_a_busy_deployment_is_passed_over_until_its_call_ends(router: Router) -> None:
    chat = router.route(CHAT)

    async with aclosing(chat.stream(ask("long"))) as held:  # a: one call in flight
        await anext(held)
        await _answers(chat, 2)
        assert (len(router.a.requests), len(router.b.requests)) == (1, 2)
    await _answers(chat, 2)  # a consumer that stopped early released its deployment

    assert (len(router.a.requests), len(router.b.requests)) == (2, 3)


async def test_idle_deployments_take_turns_by_weight(router: Router) -> None:
    weighted = RouteConfig("chat", (Deployment("a", "model-a", 3), Deployment("b", "model-b")))
    chat = router.route(weighted)

    await _answers(chat, 8)

    asked = {str(r["messages"][-1]["content"]): r["model"] for r in router.a.requests}
    asked |= {str(r["messages"][-1]["content"]): r["model"] for r in router.b.requests}
    order = [asked[f"call {i}"] for i in range(8)]
    assert order == ["model-a", "model-a", "model-b", "model-a"] * 2  # smooth, not A A A B


async def test_a_heavier_deployment_holds_more_calls_at_once(router: Router) -> None:
    router.a.reset(ScriptedModel([[delay(5), "held"]] * 4))
    router.b.reset(ScriptedModel([[delay(5), "held"]] * 4))
    weighted = RouteConfig("chat", (Deployment("a", "model-a", 2), Deployment("b", "model-b")))
    chat = router.route(weighted)

    held = [asyncio.create_task(collect(chat, ask(f"call {i}"))) for i in range(6)]
    await asyncio.sleep(0.3)  # every call waiting on its backend
    counts = (len(router.a.requests), len(router.b.requests))
    for task in held:
        task.cancel()
    await asyncio.gather(*held, return_exceptions=True)

    assert counts == (4, 2)


async def test_a_cancelled_call_releases_its_deployment(router: Router) -> None:
    router.a.reset(ScriptedModel([[delay(5), "never"]]))
    chat = router.route(CHAT)

    task = asyncio.create_task(collect(chat))
    await asyncio.sleep(0.2)  # waiting on a
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    router.a.reset(ScriptedModel())
    await _answers(chat, 2)

    assert (len(router.a.requests), len(router.b.requests)) == (1, 1)


# --- failover and cooldown -------------------------------------------------------------------

FAILOVER: list[tuple[str, ScriptedModel]] = [
    ("500", failing()),
    ("503", failing(UpstreamError("unavailable", status=503))),
    ("429", failing(UpstreamRateLimitError("slow down", status=429))),
    ("timeout", ScriptedModel([[delay(2 * TIMEOUT), "late"]])),
]


@pytest.mark.parametrize("model", [f[1] for f in FAILOVER], ids=[f[0] for f in FAILOVER])
async def test_a_failure_before_the_answer_moves_to_the_next_deployment(
    backends: list[FakeBackend], clock: Clock, http_client: HTTPClientKind, model: ScriptedModel
) -> None:
    router = Router(backends, clock, http_client)
    try:
        router.a.reset(model)
        chat = router.route(CHAT)

        assert await _answers(chat, 3) == ["call 0", "call 1", "call 2"]
        assert len(router.a.requests) == 1  # tried once, then left out
        assert len(router.b.requests) == 3
    finally:
        await router.aclose()


async def test_a_deployment_that_cannot_be_reached_is_left_out(router: Router) -> None:
    chat = router.route(RouteConfig("chat", (Deployment("down", "m"), Deployment("b", "model-b"))))

    assert await _answers(chat, 2) == ["call 0", "call 1"]
    assert len(router.b.requests) == 2


async def test_a_deployment_comes_back_after_its_cooldown(router: Router) -> None:
    router.a.reset(failing())
    chat = router.route(CHAT)
    await _answers(chat, 2)
    assert (len(router.a.requests), len(router.b.requests)) == (1, 2)

    router.clock.now += COOLDOWN - 1
    await _answers(chat, 1)
    router.a.reset(ScriptedModel())  # healthy again
    router.clock.now += 1
    await _answers(chat, 4)

    assert len(router.a.requests) == 2  # back in the rotation, and taking turns again
    assert len(router.b.requests) == 5


async def test_a_429s_retry_after_longer_than_the_cooldown_is_honoured(router: Router) -> None:
    router.a.reset(failing(UpstreamRateLimitError("slow down", status=429, retry_after=100)))
    chat = router.route(CHAT)
    await _answers(chat, 1)
    router.a.reset(ScriptedModel())  # healthy again (its record starts over)

    router.clock.now += COOLDOWN + 1  # past the cooldown, not past the retry-after
    await _answers(chat, 2)
    assert router.a.requests == []
    router.clock.now += 100
    await _answers(chat, 2)

    assert len(router.a.requests) == 1  # back once the backend's own wait was over


async def test_when_every_deployment_cools_down_the_first_back_is_tried(router: Router) -> None:
    router.a.reset(failing())
    chat = router.route(CHAT)
    await _answers(chat, 1)  # a fails: cooling until now + 30
    router.clock.now += 10
    router.b.reset(failing())
    await _answers(chat, 1)  # b fails: cooling until now + 30; the fallback answers
    router.a.reset(ScriptedModel())

    assert await _answers(chat, 1) == ["call 0"]
    assert len(router.a.requests) == 1
    assert len(router.b.requests) == 1  # its failure, nothing since


# --- what is not retried ---------------------------------------------------------------------

REFUSED: list[tuple[str, UpstreamError, type[UpstreamError]]] = [
    ("400", UpstreamRequestError("bad request", status=400), UpstreamRequestError),
    (
        "context",
        UpstreamRequestError("maximum context length", status=400),
        ContextLengthExceededError,
    ),
]


@pytest.mark.parametrize(("error", "raised"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
async def test_a_refused_request_is_not_tried_elsewhere(
    router: Router, error: UpstreamError, raised: type[UpstreamError]
) -> None:
    router.a.reset(failing(error))
    chat = router.route(CHAT)

    with pytest.raises(raised):
        await collect(chat)

    assert router.b.requests == []
    assert router.c.requests == []


async def test_a_failure_after_the_first_chunk_is_the_callers(router: Router) -> None:
    router.a.reset(ScriptedModel([[text("Hel"), break_stream()]]))
    chat = router.route(CHAT)
    seen: list[str] = []

    with pytest.raises(UpstreamError) as caught:
        await _read_into(seen, chat)

    assert "".join(seen) == "Hel"
    assert "closed the stream" in caught.value.message
    assert router.b.requests == []


# --- fallbacks -------------------------------------------------------------------------------


async def test_the_fallbacks_answer_when_every_deployment_failed(router: Router) -> None:
    router.a.reset(failing())
    router.b.reset(failing())
    chat = router.route(CHAT)

    assert await _answers(chat, 1) == ["call 0"]
    assert router.served() == ["model-a", "model-b", "small"]


async def test_a_routed_fallback_is_routed_its_own_way(router: Router) -> None:
    router.a.reset(failing())
    router.b.reset(failing())
    backup = RouteConfig("backup", (Deployment("down", "m"), Deployment("c", "small-replica")))
    chat = router.route(
        RouteConfig("chat", CHAT.deployments, fallbacks=("missing", "backup")), backup
    )

    assert await _answers(chat, 1) == ["call 0"]  # "missing" is not served: skipped
    assert router.served() == ["model-a", "model-b", "small-replica"]


async def test_the_last_error_is_raised_when_nothing_answered(router: Router) -> None:
    router.a.reset(failing())
    router.b.reset(failing())
    router.c.reset(failing(UpstreamError("gateway", status=502)))
    chat = router.route(CHAT)

    with pytest.raises(UpstreamError) as caught:
        await collect(chat)

    assert caught.value.status == 502
    assert router.served() == ["model-a", "model-b", "small"]


# --- Chat Completions, counting, listing -----------------------------------------------------

BODY: dict[str, object] = {"model": "chat", "messages": [{"role": "user", "content": "Hi"}]}


async def test_a_chat_completion_is_routed(router: Router) -> None:
    router.a.reset(failing())
    chat = router.route(CHAT)

    answer = await chat.complete(BODY)

    assert answer["model"] == "model-b"
    assert router.served() == ["model-a", "model-b"]


async def test_a_streamed_chat_completion_is_routed(router: Router) -> None:
    router.a.reset(failing())
    chat = router.route(CHAT)

    async with aclosing(chat.stream_data({**BODY, "stream": True})) as data:
        events = [event async for batch in data for event in batch]

    assert events
    assert all('"model-b"' in event for event in events)
    assert router.served() == ["model-a", "model-b"]


async def test_tokens_are_counted_by_a_deployment_not_cooling_down(router: Router) -> None:
    router.a.reset(failing())
    chat = router.route(CHAT)
    counted = await chat.count_tokens(ask())
    await _answers(chat, 1)  # a fails: cooling down

    await chat.count_tokens(ask())

    assert counted.method == "tokenizer"
    assert [r["model"] for r in router.a.tokenize_requests] == ["model-a"]
    assert [r["model"] for r in router.b.tokenize_requests] == ["model-b"]


async def test_the_catalog_serves_a_routed_model_once_under_its_id(router: Router) -> None:
    chat = router.route(RouteConfig("model-a", (Deployment("a", "model-a"),)))  # shadows a's

    resolved = await router.catalog.resolve("model-a")
    direct = await router.catalog.resolve("a/model-a")

    assert resolved.provider is chat
    assert direct.provider is router.providers["a"]
    assert await chat.list_models() == [ModelInfo(id="model-a", owned_by="router")]
    served = [(m.id, m.provider_name) for m in router.catalog.models()]
    assert served.count(("model-a", "router")) == 1
    assert [m.id for m in router.catalog.models()].count("model-a") == 1


async def test_an_unknown_deployment_provider_is_refused(router: Router) -> None:
    with pytest.raises(ValueError, match="no provider named 'nope'"):
        router.route(RouteConfig("chat", (Deployment("nope", "m"),)))


async def test_a_routed_model_needs_a_deployment(router: Router) -> None:
    with pytest.raises(ValueError, match="needs at least one deployment"):
        router.route(RouteConfig("chat", ()))


async def test_a_routed_models_context_window_is_its_smallest_deployments() -> None:
    """What fits the smallest deployment fits wherever the call goes (truncation and compaction
    read the window from the catalog)."""
    providers: dict[str, Provider] = {
        "big": ScriptedModel(models=("m-big",), context_window=32_768),
        "small": ScriptedModel(models=("m-small",), context_window=8_192),
        "unknown": ScriptedModel(models=("m-unknown",)),
    }
    configs = {name: ProviderConfig(name=name, type="scripted") for name in providers}
    catalog = ModelCatalog(providers, configs)
    await catalog.refresh()
    spread = RouteConfig(
        "chat",
        (
            Deployment("big", "m-big"),
            Deployment("small", "m-small"),
            Deployment("unknown", "m-unknown"),
        ),
    )
    alone = RouteConfig("alone", (Deployment("unknown", "m-unknown"),))
    catalog.route({c.id: RoutedModel(c, providers, catalog.lookup) for c in (spread, alone)})

    assert (await catalog.resolve("chat")).model.info.context_window == 8_192
    assert (await catalog.resolve("alone")).model.info.context_window is None


async def test_a_deployment_without_chat_completions_is_refused_on_that_api() -> None:
    """A routed model passes Chat Completions only to providers that take them (decided once
    per provider class, not by an ``isinstance`` against the protocol on every call)."""
    scripted = ScriptedModel(models=("m",))
    routed = RoutedModel(RouteConfig("r", (Deployment("s", "m"),)), {"s": scripted}, _no_fallback)
    served = OpenAICompatibleProvider(_config("o", "http://127.0.0.1:9/v1", "m", "lean"))
    try:
        assert chat_completions_of(scripted) is None
        assert chat_completions_of(routed) is routed
        assert chat_completions_of(served) is served
        assert native_responses_of(served) is served
        assert native_responses_of(scripted) is None
        for _ in range(2):  # the second answer comes from what the first decided
            with pytest.raises(InvalidRequestError) as refused:
                await routed.complete({"model": "r", "messages": []})
            assert refused.value.code == "model_not_supported"
    finally:
        await served.aclose()


async def _no_fallback(name: str) -> Resolved:
    raise AssertionError(f"no fallback is asked for ({name})")
