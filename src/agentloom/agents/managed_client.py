"""A client of a server's managed agents (``/v1/managed-agents``): agents that live on the server,
keep their history and state, take messages from any client and run on a schedule.

```python
agents = ManagedAgents("http://127.0.0.1:8321/v1")
agent = await agents.create("helper", agent_type="orchestrator", model="qwen3",
                            tools=["calculator"], instructions="Be brief.")
async for event in agents.stream(agent.id, "What is 6*7?"):   # the reply as it is made
    ...                                                        # AgentChunk, ToolCallsEvent ...
await agents.send(agent.id, "Then look at the logs.")          # queued for the next run
run = await agents.run(agent.id)                               # a durable job on the server
async for event in agents.follow(agent.id, run.id): ...        # its stream, from any client
```

The objects are the server's wire models (:mod:`agentloom.api.managed_agents`); a streamed reply
is its frames (:mod:`agentloom.api.managed_agent_stream`), and an error frame is raised as an
:class:`~agentloom.errors.UpstreamError` when the stream has ended.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeVar

import httpx2
from pydantic import BaseModel

from agentloom.api.managed_agent_stream import (
    TOOL_CALLS,
    TOOL_RESULT,
    AgentChunk,
    ToolCallsEvent,
    ToolResultEvent,
)
from agentloom.api.managed_agents import (
    AgentMessage,
    AgentMessagePage,
    AgentRun,
    AgentState,
    AgentTask,
    AgentTaskList,
    DeletedManagedAgent,
    ManagedAgent,
    ManagedAgentPage,
)
from agentloom.errors import UpstreamError
from agentloom.frozen import frozen
from agentloom.redact import redact_url
from agentloom.tls import context_for
from agentloom.upstream import Failure

if TYPE_CHECKING:
    import openai

__all__ = ["AgentStreamEvent", "ManagedAgents", "reply_text"]

AgentStreamEvent: TypeAlias = AgentChunk | ToolCallsEvent | ToolResultEvent
M = TypeVar("M", bound=BaseModel)
DEFAULT_BASE_URL = "http://127.0.0.1:8321/v1"
PATH = "/managed-agents"
TIMEOUT = httpx2.Timeout(600.0, connect=5.0)  # as the openai client's defaults


@frozen
class _Call:
    """One request to the server: ``stream``: the answer's body is left unread."""

    method: Literal["get", "post", "delete"]
    path: str
    body: Mapping[str, Any] | None = None
    params: Mapping[str, Any] | None = None
    stream: bool = False


class _Http(Protocol):
    """How requests reach the server: an ``openai`` client's, or a plain HTTP client's."""

    async def send(self, call: _Call) -> httpx2.Response: ...

    async def aclose(self) -> None: ...


class _SdkHttp:
    """Through an ``openai.AsyncOpenAI`` (its retries, its errors); left open: it is the
    caller's."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self.client = client

    async def send(self, call: _Call) -> httpx2.Response:
        options: Any = {"params": dict(call.params)} if call.params else {}
        at: Any = {"cast_to": httpx2.Response, "options": options}
        if call.method == "get":
            reply: httpx2.Response = await self.client.get(call.path, stream=call.stream, **at)
        elif call.method == "post":
            body = dict(call.body or {})
            reply = await self.client.post(call.path, body=body, stream=call.stream, **at)
        else:
            reply = await self.client.delete(call.path, **at)
        return reply

    async def aclose(self) -> None:
        pass


class _PlainHttp:
    """Straight to a base URL (no ``openai`` import: ``agentloom agents`` starts fast). What
    the server refused is an :class:`UpstreamError` carrying its status and message."""

    def __init__(self, base_url: str, api_key: str | None) -> None:
        self.where = base_url.rstrip("/")
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.AsyncClient(
            base_url=self.where + "/",
            headers=headers,
            timeout=TIMEOUT,
            verify=context_for(self.where),
        )

    async def send(self, call: _Call) -> httpx2.Response:
        request = self._client.build_request(
            call.method.upper(),
            call.path.lstrip("/"),
            json=call.body,
            params=dict(call.params or {}),
        )
        try:
            reply = await self._client.send(request, stream=call.stream)
        except httpx2.TransportError as exc:
            raise UpstreamError(
                f"cannot reach the server at {redact_url(self.where)}: {exc}"
            ) from exc
        if reply.is_success:
            return reply
        raw = await reply.aread()
        failure = Failure.of_http(reply.status_code, reply.headers, raw)
        message = f"the server answered {reply.status_code}: {failure.message}"
        raise UpstreamError(message, status=reply.status_code, code=failure.code)

    async def aclose(self) -> None:
        await self._client.aclose()


class ManagedAgents:
    """The managed agents of the server ``client`` talks to: an ``openai.AsyncOpenAI`` (left
    open: it is the caller's; its errors are the ``openai`` package's) or a base URL (closed by
    :meth:`aclose`; what the server refuses is an :class:`~agentloom.errors.UpstreamError`);
    ``api_key`` defaults to ``AGENTLOOM_API_KEY``, then ``OPENAI_API_KEY``."""

    def __init__(self, client: openai.AsyncOpenAI | str, *, api_key: str | None = None) -> None:
        self._http: _Http
        if isinstance(client, str):
            key = api_key or os.environ.get("AGENTLOOM_API_KEY") or os.environ.get("OPENAI_API_KEY")
            self._http = _PlainHttp(client, key)
        else:
            self._http = _SdkHttp(client)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> ManagedAgents:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- agents ------------------------------------------------------------------------------

    async def create(
        self,
        name: str,
        *,
        agent_type: str | None = None,
        model: str | None = None,
        tools: Sequence[str] = (),
        instructions: str | None = None,
        max_turns: int | None = None,
        schedule: Mapping[str, Any] | None = None,
        task: str | None = None,
        config: Mapping[str, Any] | None = None,
        template_id: str | None = None,
    ) -> ManagedAgent:
        """An agent on the server. ``schedule``: ``{"type": "interval", "every": SECONDS}`` or
        ``{"type": "cron", "cron": EXPRESSION}``; ``config`` adds any other key."""
        given = {
            "model": model,
            "tools": list(tools) or None,
            "instructions": instructions,
            "max_turns": max_turns,
            "schedule": dict(schedule) if schedule else None,
            "task": task,
        }
        body: dict[str, Any] = {
            "name": name,
            "config": {**{k: v for k, v in given.items() if v is not None}, **(config or {})},
        }
        if agent_type is not None:
            body["agent_type"] = agent_type
        if template_id is not None:
            body["template_id"] = template_id
        return await self._post(PATH, body, ManagedAgent)

    async def get(self, agent_id: str) -> ManagedAgent:
        return await self._get(f"{PATH}/{agent_id}", ManagedAgent)

    async def list_agents(self, *, limit: int = 100) -> list[ManagedAgent]:
        """Every agent of the project, oldest first (page by page)."""
        agents: list[ManagedAgent] = []
        after: str | None = None
        while True:
            query = {"limit": limit, "order": "asc", **({"after": after} if after else {})}
            page = await self._get(PATH, ManagedAgentPage, query)
            agents += page.data
            if not page.has_more:
                return agents
            after = page.last_id

    async def update(
        self, agent_id: str, *, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> ManagedAgent:
        """A new name, or a new configuration (it replaces the whole configuration)."""
        body = {k: v for k, v in (("name", name), ("config", config)) if v is not None}
        return await self._post(f"{PATH}/{agent_id}", body, ManagedAgent)

    async def delete(self, agent_id: str) -> DeletedManagedAgent:
        reply = await self._http.send(_Call("delete", f"{PATH}/{agent_id}"))
        return DeletedManagedAgent.model_validate_json(reply.content)

    async def state(self, agent_id: str) -> AgentState:
        return await self._get(f"{PATH}/{agent_id}/state", AgentState)

    # --- messages ----------------------------------------------------------------------------

    async def send(self, agent_id: str, content: str, *, mode: str = "queued") -> AgentMessage:
        """Queue a message for the agent's next run (``immediate``: start that run now)."""
        body = {"content": content, "mode": mode}
        return await self._post(f"{PATH}/{agent_id}/messages", body, AgentMessage)

    async def stream(
        self, agent_id: str, content: str, *, mode: str = "immediate"
    ) -> AsyncGenerator[AgentStreamEvent, None]:
        """Run the agent on ``content`` now; its reply as it is made."""
        body = {"content": content, "mode": mode, "stream": True}
        reply = await self._http.send(
            _Call("post", f"{PATH}/{agent_id}/messages", body, stream=True)
        )
        async for event in _events(reply):
            yield event

    async def messages(self, agent_id: str, *, limit: int = 20) -> list[AgentMessage]:
        """The agent's latest ``limit`` messages, oldest first."""
        query = {"limit": limit, "order": "desc"}
        page = await self._get(f"{PATH}/{agent_id}/messages", AgentMessagePage, query)
        return list(reversed(page.data))

    # --- runs --------------------------------------------------------------------------------

    async def run(self, agent_id: str) -> AgentRun:
        """Run the agent over its queued messages (a durable job on the server)."""
        return await self._post(f"{PATH}/{agent_id}/run", {}, AgentRun)

    async def runs(self, agent_id: str, *, limit: int = 20) -> list[AgentRun]:
        """The agent's latest ``limit`` runs, newest first."""
        page = await self._http.send(
            _Call("get", f"{PATH}/{agent_id}/runs", params={"limit": limit})
        )
        return [AgentRun.model_validate(run) for run in page.json()["data"]]

    async def get_run(self, agent_id: str, run_id: str) -> AgentRun:
        return await self._get(f"{PATH}/{agent_id}/runs/{run_id}", AgentRun)

    async def cancel_run(self, agent_id: str, run_id: str) -> AgentRun:
        """Stop a queued or running run (the run once cancelled; an ended one as it is)."""
        return await self._post(f"{PATH}/{agent_id}/runs/{run_id}/cancel", {}, AgentRun)

    async def follow(
        self, agent_id: str, run_id: str, *, after: int = -1
    ) -> AsyncGenerator[AgentStreamEvent, None]:
        """A run's stream: its frames so far (after the ``after``-th), then live ones."""
        params: dict[str, Any] = {"stream": "true"}
        if after >= 0:
            params["starting_after"] = after
        call = _Call("get", f"{PATH}/{agent_id}/runs/{run_id}", params=params, stream=True)
        reply = await self._http.send(call)
        async for event in _events(reply):
            yield event

    # --- tasks -------------------------------------------------------------------------------

    async def add_task(self, agent_id: str, description: str) -> AgentTask:
        body = {"description": description}
        return await self._post(f"{PATH}/{agent_id}/tasks", body, AgentTask)

    async def tasks(self, agent_id: str) -> list[AgentTask]:
        return (await self._get(f"{PATH}/{agent_id}/tasks", AgentTaskList)).data

    # --- plumbing ----------------------------------------------------------------------------

    async def _get(self, path: str, model: type[M], query: Mapping[str, Any] | None = None) -> M:
        reply = await self._http.send(_Call("get", path, params=query))
        return model.model_validate_json(reply.content)

    async def _post(self, path: str, body: Mapping[str, Any], model: type[M]) -> M:
        reply = await self._http.send(_Call("post", path, body))
        return model.model_validate_json(reply.content)


async def _events(reply: httpx2.Response) -> AsyncGenerator[AgentStreamEvent, None]:
    """The frames of a managed agent's stream until ``[DONE]``. An error frame is raised once
    the stream has ended (by then the server has stored what the turn left)."""
    event, failure = "", None
    try:
        async for line in reply.aiter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = line.removeprefix("data: ")
                if data == "[DONE]":
                    break
                parsed = _event(event, data)
                if isinstance(parsed, UpstreamError):
                    failure = parsed
                else:
                    yield parsed
                event = ""
    finally:
        await reply.aclose()
    if failure is not None:
        raise failure


def _event(name: str, data: str) -> AgentStreamEvent | UpstreamError:
    if name == TOOL_CALLS:
        return ToolCallsEvent.model_validate_json(data)
    if name == TOOL_RESULT:
        return ToolResultEvent.model_validate_json(data)
    parsed = json.loads(data)
    if "error" in parsed:
        error = parsed["error"]
        return UpstreamError(error.get("message", "the agent failed"), code=error.get("code"))
    return AgentChunk.model_validate(parsed)


def reply_text(events: Sequence[AgentStreamEvent]) -> str:
    """The text of a streamed reply's chunks."""
    return "".join(
        choice.delta.content or ""
        for event in events
        if isinstance(event, AgentChunk)
        for choice in event.choices
    )
