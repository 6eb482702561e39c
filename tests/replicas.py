"""Fake backends over real HTTP standing for the deployments of a routed model, and scripts
that make one fail."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from agentloom.config import ProviderSettings, RoutedModelSettings, Settings
from agentloom.errors import UpstreamError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, TurnPart, raise_error
from agentloom.testing.backend import FakeBackend


@contextmanager
def fake_backends(count: int) -> Iterator[list[FakeBackend]]:
    """``count`` fake backends, each serving an echoing :class:`ScriptedModel` on its port."""
    with ExitStack() as stack:
        backends = [FakeBackend(ScriptedModel()) for _ in range(count)]
        for backend in backends:
            stack.enter_context(backend.serve())
        yield backends


def failing(error: UpstreamError | None = None) -> ScriptedModel:
    """A model whose every answer is ``error`` (default: an HTTP 500) before any chunk."""
    failure = error or UpstreamError("the replica is down", status=500)

    def respond(request: ChatRequest) -> list[TurnPart]:
        return [raise_error(failure)]

    return ScriptedModel(respond)


class Clock:
    """A monotonic clock the test moves by hand (cooldowns without sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


SERVED = {"a": "model-a", "b": "model-b", "c": "small"}  # provider -> the model it serves


def routed_settings(
    base: Settings,
    replicas: list[FakeBackend],
    models: list[RoutedModelSettings],
    *,
    timeout: float,
) -> Settings:
    """``base`` with providers ``a``, ``b`` and ``c`` on ``replicas`` (serving ``model-a``,
    ``model-b`` and ``small``) and the routed ``models``."""
    providers = [
        ProviderSettings(name=name, base_url=r.base_url, models=[SERVED[name]], timeout=timeout)
        for name, r in zip(SERVED, replicas, strict=True)
    ]
    return Settings.model_validate(
        {**base.model_dump(), "providers": [*base.providers, *providers], "models": models}
    )
