"""Managed agents built on the server: the SDK's strategies and tools (the ``AGENTS`` and
``TOOLS`` tables of :mod:`agentloom.agents.builders`) on the server's own models.

An agent's model is a served model of the catalog, called as the agent's project
(:mod:`agentloom.services.managed_agents.models`). Its tools are the SDK's built-in tools by
name, and
``mcp:<label>`` for a ``[[mcp.servers]]`` server the server declares. Each agent has a folder of
its own under ``[managed_agents] directory``: ``file_read`` reads only inside its ``workspace``
(never the server's own files), code_interpreter keeps its sessions there. Operatives keep their
sessions, and the memory tools their notes, on the server's database, under the agent's id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from agentloom.agents.base import AgentContext, AgentInput, BaseAgent
from agentloom.agents.builders import (
    AGENTS,
    MCP_PREFIX,
    TOOLS,
    AgentOptions,
    build_agent,
    build_tools,
)
from agentloom.agents.memory import MemoryStore
from agentloom.agents.operative import OperativeAgent
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tool_agent import ToolUsingAgent
from agentloom.agents.tools.base import Tool, ToolEnvironment
from agentloom.api.managed_agents import ManagedAgentConfig
from agentloom.config import Settings
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.inference.catalog import ModelCatalog, names
from agentloom.json_types import JSONObject
from agentloom.llm.client import LLM
from agentloom.llm.options import CallOptions
from agentloom.llm.types import Message
from agentloom.services.managed_agents.models import ProjectModel
from agentloom.services.organization.usage import UsageLedger
from agentloom.storage.database import Database
from agentloom.storage.managed_agents import MessageRow

__all__ = ["AgentFactory", "BuiltAgent"]

WORKSPACE = "workspace"  # file_read's folder, in the agent's own


@dataclass
class BuiltAgent:
    """An agent ready to run a turn, and what it holds (closed by :meth:`aclose`)."""

    agent: BaseAgent
    model: str  # the served model it calls
    context: AgentContext
    tools: list[Tool]
    closed: bool = False

    @property
    def keeps_history(self) -> bool:
        """An operative keeps its conversation in its session: a turn gives it only what is
        new."""
        return isinstance(self.agent, OperativeAgent)

    def input(self, history: Sequence[MessageRow], new: Sequence[str]) -> AgentInput:
        """What a turn runs on: the new messages, after the stored conversation unless the
        agent keeps its own."""
        if self.keeps_history:
            return "\n\n".join(new)
        said = [_message(row) for row in history]
        return [*said, *(Message.user(text) for text in new)]

    async def aclose(self) -> None:
        """Close its tools (once, however often it is called)."""
        if self.closed:
            return
        self.closed = True
        if isinstance(self.agent, ToolUsingAgent | OperativeAgent):
            await self.agent.aclose()  # its tools with it
            return
        for tool in self.tools:
            await tool.aclose()


class AgentFactory:
    def __init__(
        self,
        catalog: ModelCatalog,
        usage: UsageLedger,
        settings: Settings,
        database: Database,
    ) -> None:
        self._catalog = catalog
        self._usage = usage
        self._settings = settings
        self._sessions = SessionStore.on(database)
        self._memory = MemoryStore.on(database)
        self._directory = settings.managed_agents.directory

    @property
    def sessions(self) -> SessionStore:
        return self._sessions

    def check(self, agent_type: str, config: ManagedAgentConfig) -> None:
        """A 400 naming what is wrong: an agent type or a tool that is not known here, or a
        strategy that refuses the configuration (the simple agent given tools ...)."""
        if agent_type not in AGENTS:
            raise InvalidRequestError(
                f"Unknown agent_type '{agent_type}'; known: {', '.join(AGENTS)}.",
                param="agent_type",
                code="invalid_value",
            )
        for name in config.tools:
            self._check_tool(name)
        options = self._options("check", config)
        placeholders = [_Placeholder(name) for name in config.tools]
        try:
            build_agent(agent_type, LLM("check", provider=None), placeholders, options)
        except InvalidRequestError as exc:  # the strategy's refusal (a runtime to install ...)
            if exc.param is not None:
                raise
            raise InvalidRequestError(exc.message, param="agent_type", code=exc.code) from exc

    def _check_tool(self, name: str) -> None:
        if name in TOOLS:
            return
        labels = [server.label for server in self._settings.mcp.servers]
        if name.startswith(MCP_PREFIX) and name.removeprefix(MCP_PREFIX) in labels:
            return
        declared = ", ".join(f"{MCP_PREFIX}{label}" for label in labels)
        known = ", ".join(TOOLS) + (f"; declared MCP servers: {declared}" if declared else "")
        raise InvalidRequestError(
            f"Unknown tool '{name}'; the server's tools are: {known}.",
            param="config.tools",
            code="invalid_value",
        )

    async def check_model(self, config: ManagedAgentConfig) -> None:
        """A 400 naming the models served when the agent names one that this project cannot
        call (none named: the server's only model, found when the agent runs)."""
        if config.model is None:
            return
        try:
            await self._catalog.resolve(config.model, use=False)
        except NotFoundError:
            served = ", ".join(names(self._catalog.models())) or "none"
            raise InvalidRequestError(
                f"The model '{config.model}' is not served here; the models served: {served}.",
                param="config.model",
                code="model_not_found",
            ) from None

    async def model(self, config: ManagedAgentConfig) -> str:
        """The served model the agent calls (the only one served when it names none): a 404
        when the project may not use it; its admission counted (a 429 over its limits)."""
        model = config.model or self._catalog.only_model()
        await self._catalog.resolve(model)
        return model

    async def build(self, agent_id: str, agent_type: str, config: ManagedAgentConfig) -> BuiltAgent:
        """The agent, on its model (see :meth:`model`; its first call is not admitted again)."""
        model = await self.model(config)
        options = CallOptions(temperature=config.temperature, max_output_tokens=config.max_tokens)
        provider = ProjectModel(self._catalog, self._usage, model, admitted=True)
        llm = LLM(model, provider=provider, options=options)
        folder = self._directory / agent_id
        tools = await self._tools(config.tools, folder, agent_id)
        agent = build_agent(agent_type, llm, tools, self._options(agent_id, config))
        context = AgentContext(session_id=agent_id, workspace=folder / WORKSPACE)
        return BuiltAgent(agent, model, context, tools)

    async def _tools(self, names: Sequence[str], folder: Path, agent_id: str) -> list[Tool]:
        if not names:
            return []
        environment = ToolEnvironment(
            workspace=folder / WORKSPACE,
            data_dir=folder,
            settings=self._settings,
            session_id=agent_id,
            memory=self._memory,
        )
        if "file_read" in names:  # its workspace, made on first use (empty until files come)
            await anyio.to_thread.run_sync(_make_folder, folder / WORKSPACE)
        if any(name.startswith(MCP_PREFIX) for name in names):  # it connects: off the loop
            return await anyio.to_thread.run_sync(build_tools, list(names), environment)
        return build_tools(list(names), environment)

    def _options(self, agent_id: str, config: ManagedAgentConfig) -> AgentOptions:
        return AgentOptions(
            instructions=config.prompt,
            max_turns=config.max_turns,
            data_dir=self._directory / agent_id,
            strategies=dict(config.strategies or {}),
            sessions=self._sessions,
            agent_name=agent_id,
            task=config.task,
        )


class _Placeholder(Tool):
    """A tool by name only: what a strategy is given when it is checked, not run."""

    parameters: JSONObject = {"type": "object", "properties": {}}
    description = ""

    def __init__(self, name: str) -> None:
        self.name = name

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        raise NotImplementedError("a placeholder is never called")


def _make_folder(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def _message(row: MessageRow) -> Message:
    if row.direction == "agent_to_user":
        return Message.assistant(row.content)
    return Message.user(row.content)
