"""Where ``agentloom ask`` / ``chat`` and :func:`agentloom.ask` find their model, and the agent
they build on it.

Each setting is resolved on its own, first found wins:

1. the explicit argument (``--model``, ``model=`` ...);
2. the environment: ``AGENTLOOM_BASE_URL`` / ``AGENTLOOM_API_KEY`` / ``AGENTLOOM_MODEL``, then
   ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``;
3. the ``--config`` TOML file: its first ``[[providers]]`` entry's ``base_url``, API key (only
   when that base URL is the one used) and ``models[0]``;
4. the default base URL ``http://127.0.0.1:8321/v1``, a local agentloom server.

With no model named, ``server_model`` (when given) picks one from the endpoint: the CLI asks
the server for its only chat model. The wire path is the explicit one, else Responses for the
default (an agentloom server serves the Responses API), else the model's capability decides.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import field
from pathlib import Path as FilePath

from agentloom.agents.base import BaseAgent
from agentloom.agents.builders import AgentOptions, ToolEnvironment, build_agent, build_tools
from agentloom.agents.tools.base import Tool
from agentloom.config import ProviderSettings, Settings, load_settings
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.llm.client import LLM
from agentloom.llm.types import Path

__all__ = [
    "DEFAULT_BASE_URL",
    "Connection",
    "ConnectionSettingsError",
    "open_agent",
    "resolve_connection",
]

DEFAULT_BASE_URL = "http://127.0.0.1:8321/v1"


class ConnectionSettingsError(InvalidRequestError):
    """The model to talk to cannot be determined (no model named anywhere)."""


@frozen
class Connection:
    """A model behind an endpoint, and the configuration its tools read."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    path: Path | None = None
    settings: Settings = field(default_factory=Settings, repr=False, compare=False)

    def llm(self) -> LLM:
        return LLM(self.model, base_url=self.base_url, api_key=self.api_key, path=self.path)


def resolve_connection(
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    path: Path | None = None,
    config: str | FilePath | None = None,
    env: Mapping[str, str] | None = None,
    server_model: Callable[[str, str | None], str] | None = None,
) -> Connection:
    """The connection the arguments, the environment and the ``config`` file describe;
    ``server_model(base_url, api_key)`` names the model when none of them does."""
    env = os.environ if env is None else env
    settings = load_settings(config, env) if config is not None else Settings()
    provider = settings.providers[0] if config is not None and settings.providers else None
    url = _first(base_url, env.get("AGENTLOOM_BASE_URL"), env.get("OPENAI_BASE_URL"))
    url = url or (provider.base_url if provider else None)
    key = _first(api_key, env.get("AGENTLOOM_API_KEY"), env.get("OPENAI_API_KEY"))
    if key is None and provider is not None and url == provider.base_url:
        key = provider.to_config(env).api_key
    if url is None:
        url = DEFAULT_BASE_URL
        path = path or "responses"
    url = url.rstrip("/")
    name = _first(model, env.get("AGENTLOOM_MODEL")) or _provider_model(provider)
    if name is None and server_model is not None:
        name = server_model(url, key)
    if name is None:
        raise ConnectionSettingsError(
            "no model given: pass --model (model= in Python), set AGENTLOOM_MODEL, or list "
            "models in the first [[providers]] entry of the --config file"
        )
    return Connection(url, name, key, path, settings)


@asynccontextmanager
async def open_agent(
    connection: Connection,
    agent: str = "orchestrator",
    tools: Sequence[str | Tool] = (),
    options: AgentOptions | None = None,
    *,
    workspace: FilePath | None = None,
    session_id: str = "default",
) -> AsyncIterator[BaseAgent]:
    """The named agent on the connection's model with ``tools`` (names from the tool table,
    or :class:`Tool` instances); the LLM and the tools built from names are closed after."""
    environment = ToolEnvironment(
        workspace=workspace or FilePath.cwd(), settings=connection.settings, session_id=session_id
    )
    named = [tool for tool in tools if isinstance(tool, str)]
    built = build_tools(named, environment)
    given = iter(built)
    resolved = [next(given) if isinstance(tool, str) else tool for tool in tools]
    llm = connection.llm()
    try:
        yield build_agent(agent, llm, resolved, options)
    finally:
        try:
            await llm.aclose()
        finally:
            for tool in built:
                await tool.aclose()


def _first(*values: str | None) -> str | None:
    return next((value for value in values if value), None)


def _provider_model(provider: ProviderSettings | None) -> str | None:
    return provider.models[0] if provider is not None and provider.models else None
