"""Real clients against a routed model over a socket: LangChain's default ``ChatOpenAI`` and
``OpenAIEmbeddings`` and the Vercel AI SDK's ``openai.chat`` get their answers while one of two
deployments fails (it is then left out: cooldown), and from the fallback when both fail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import langchain_openai
import pytest

from agentloom.config import DeploymentSettings, RoutedModelSettings, Settings
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.clients import node
from tests.clients.test_vercel_ai import SCRIPT
from tests.plugins.server import make_settings
from tests.replicas import failing, fake_backends, routed_settings

COOLDOWN = 30.0  # longer than any test: a failed deployment stays out


@pytest.fixture(scope="module")
def _served() -> Iterator[list[FakeBackend]]:
    with fake_backends(3) as backends:
        yield backends


@pytest.fixture
def replicas(_served: list[FakeBackend]) -> list[FakeBackend]:
    """Providers ``a`` and ``b`` (deployments of ``chat`` and ``vectors``) and ``c`` (``small``,
    the fallback of ``chat``), each echoing."""
    for backend in _served:
        backend.reset(ScriptedModel())
    return _served


@pytest.fixture
def settings(backend: FakeBackend, replicas: list[FakeBackend], tmp_path: Path) -> Settings:
    base = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}", timeout=2.0)
    both = [DeploymentSettings(provider="a", model="model-a")]
    both.append(DeploymentSettings(provider="b", model="model-b"))
    chat = RoutedModelSettings(id="chat", deployments=both, fallbacks=["small"], cooldown=COOLDOWN)
    vectors = RoutedModelSettings(
        id="vectors", kind="embeddings", deployments=both, cooldown=COOLDOWN
    )
    return routed_settings(base, replicas, [chat, vectors], timeout=2.0)


def _chat(url: str) -> langchain_openai.ChatOpenAI:
    return langchain_openai.ChatOpenAI(base_url=url, api_key="sk-test", model="chat")


def test_langchain_chat_goes_around_a_failing_deployment(
    agentloom_url: str, replicas: list[FakeBackend]
) -> None:
    a, b, _ = replicas
    a.reset(failing())
    llm = _chat(agentloom_url)

    answers = [llm.invoke(f"call {n}").content for n in range(3)]
    streamed = "".join(str(chunk.content) for chunk in llm.stream("streamed"))

    assert answers == ["call 0", "call 1", "call 2"]
    assert streamed == "streamed"
    assert (len(a.requests), len(b.requests)) == (1, 4)  # a failed once, then cooled down


def test_langchain_chat_falls_back(agentloom_url: str, replicas: list[FakeBackend]) -> None:
    a, b, c = replicas
    a.reset(failing())
    b.reset(failing(UpstreamError("overloaded", status=503)))

    answer = _chat(agentloom_url).invoke("rescued")

    assert answer.content == "rescued"
    assert [r["model"] for r in c.requests] == ["small"]


def test_langchain_embeddings_go_around_a_failing_deployment(
    agentloom_url: str, replicas: list[FakeBackend]
) -> None:
    a, b, _ = replicas
    a.embedding_errors = [UpstreamError("the replica is down", status=500)] * 5
    embeddings = langchain_openai.OpenAIEmbeddings(
        base_url=agentloom_url,
        api_key="sk-test",
        model="vectors",
        check_embedding_ctx_length=False,
    )

    first = embeddings.embed_documents(["kettle", "descaling"])
    again = embeddings.embed_query("kettle")

    assert len(first) == 2
    assert first[0] == pytest.approx(again)
    assert (len(a.embedding_requests), len(b.embedding_requests)) == (1, 2)


def test_vercel_chat_falls_back(
    agentloom_url: str, replicas: list[FakeBackend], tmp_path: Path
) -> None:
    node.node()
    node.package("ai")
    node.package("@ai-sdk/openai")
    a, b, c = replicas
    a.reset(failing())
    b.reset(failing())
    options = {
        "baseURL": agentloom_url,
        "model": "chat",
        "scenario": "stream",
        "prompt": "rescued",
        "api": "chat",
    }

    result = node.run([node.node(), SCRIPT, json.dumps(options)], env={}, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout.splitlines()[-1])
    assert answer["text"] == "rescued"
    assert (len(a.requests), len(b.requests), len(c.requests)) == (1, 1, 1)
