"""``agentloom agents create/list/send/run/cancel/delete/logs``: managed agents on a server
(``/v1/managed-agents``), through :class:`~agentloom.agents.managed_client.ManagedAgents`.

The server is ``--base-url`` (or ``AGENTLOOM_BASE_URL``; default a local agentloom), the key
``--api-key`` (or ``AGENTLOOM_API_KEY``). A reply streams to stdout as it is made, its tool
calls and results as lines on stderr.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from agentloom.cli.options import fail

if TYPE_CHECKING:
    from agentloom.agents.managed_client import AgentStreamEvent, ManagedAgents
    from agentloom.api.managed_agents import DeletedManagedAgent

__all__ = ["COMMANDS"]

T = TypeVar("T")
DEFAULT_BASE_URL = "http://127.0.0.1:8321/v1"
RESULT_CHARS = 200  # of a tool's result shown

_server_options = (
    click.option(
        "--base-url",
        envvar="AGENTLOOM_BASE_URL",
        default=DEFAULT_BASE_URL,
        show_default=True,
        help="The server [env AGENTLOOM_BASE_URL].",
    ),
    click.option(
        "--api-key", envvar="AGENTLOOM_API_KEY", default=None, help="[env AGENTLOOM_API_KEY]"
    ),
)


def _server(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_server_options):
        command = option(command)
    return command


def _run(base_url: str, api_key: str | None, work: Callable[[ManagedAgents], Awaitable[T]]) -> T:
    """``work`` on the server's managed agents; what the server refused (or that it cannot be
    reached) as one line, exit 1."""
    from agentloom.agents.managed_client import ManagedAgents
    from agentloom.errors import AgentloomError

    async def main() -> T:
        async with ManagedAgents(base_url, api_key=api_key) as agents:
            return await work(agents)

    try:
        return asyncio.run(main())
    except AgentloomError as exc:
        fail(exc.message)


def _tool_names(_ctx: click.Context, _param: click.Parameter, value: Sequence[str]) -> list[str]:
    return [name.strip() for given in value for name in given.split(",") if name.strip()]


@click.command()
@click.argument("name")
@click.option(
    "--type", "agent_type", default=None, help="The agent's strategy (default: the server's)."
)
@click.option("--model", default=None, help="A model the server serves (default: its only one).")
@click.option("--tools", multiple=True, callback=_tool_names, help="Comma-separated tool names.")
@click.option("--instructions", default=None)
@click.option("--max-turns", type=click.IntRange(1, 100), default=None)
@click.option("--every", type=float, default=None, help="Run every SECONDS by itself.")
@click.option("--cron", default=None, help="Run at the times of a cron expression (UTC).")
@click.option("--task", default=None, help="What a scheduled run works on.")
@click.option("--template", "template_id", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the agent as JSON.")
@_server
def create(
    name: str,
    agent_type: str | None,
    model: str | None,
    tools: list[str],
    instructions: str | None,
    max_turns: int | None,
    every: float | None,
    cron: str | None,
    task: str | None,
    template_id: str | None,
    as_json: bool,
    base_url: str,
    api_key: str | None,
) -> None:
    """Create an agent on the server; prints its id."""
    if every is not None and cron is not None:
        raise click.UsageError("give --every or --cron, not both")
    schedule: dict[str, Any] | None = None
    if every is not None:
        schedule = {"type": "interval", "every": every}
    elif cron is not None:
        schedule = {"type": "cron", "cron": cron}
    made = _run(
        base_url,
        api_key,
        lambda agents: agents.create(
            name,
            agent_type=agent_type,
            model=model,
            tools=tools,
            instructions=instructions,
            max_turns=max_turns,
            schedule=schedule,
            task=task,
            template_id=template_id,
        ),
    )
    click.echo(made.model_dump_json(indent=2) if as_json else made.id)


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the agents as JSON.")
@_server
def list_agents(as_json: bool, base_url: str, api_key: str | None) -> None:
    """List the project's agents: id, type, status, name."""
    listed = _run(base_url, api_key, lambda agents: agents.list_agents())
    if as_json:
        click.echo(json.dumps([agent.model_dump(mode="json") for agent in listed], indent=2))
        return
    for agent in listed:
        click.echo(f"{agent.id}  {agent.agent_type}  {agent.status}  {agent.name}")


@click.command()
@click.argument("agent_id")
@click.argument("message")
@click.option("--queue", "queued", is_flag=True, help="Queue it for the agent's next run.")
@click.option("--run", "run_now", is_flag=True, help="Queue it and start a run now.")
@_server
def send(
    agent_id: str, message: str, queued: bool, run_now: bool, base_url: str, api_key: str | None
) -> None:
    """Send MESSAGE to an agent; its reply streams as it is made (unless queued)."""
    if queued or run_now:
        mode = "immediate" if run_now else "queued"
        sent = _run(base_url, api_key, lambda agents: agents.send(agent_id, message, mode=mode))
        click.echo(sent.run_id or sent.id)
        return
    _run(base_url, api_key, lambda agents: _show(agents.stream(agent_id, message)))


@click.command()
@click.argument("agent_id")
@click.option("--follow", is_flag=True, help="Stream the run's output until it ends.")
@_server
def run(agent_id: str, follow: bool, base_url: str, api_key: str | None) -> None:
    """Run an agent over its queued messages (a job on the server); prints the run's id."""

    async def start(agents: ManagedAgents) -> str:
        started = await agents.run(agent_id)
        click.echo(started.id, err=follow)
        if follow:
            await _show(agents.follow(agent_id, started.id))
            ended = await agents.get_run(agent_id, started.id)
            return ended.status
        return started.status

    status = _run(base_url, api_key, start)
    if status == "failed":
        sys.exit(1)


@click.command()
@click.argument("agent_id")
@click.argument("run_id")
@_server
def cancel(agent_id: str, run_id: str, base_url: str, api_key: str | None) -> None:
    """Stop a queued or running run; prints its status once stopped."""
    stopped = _run(base_url, api_key, lambda agents: agents.cancel_run(agent_id, run_id))
    click.echo(stopped.status)


@click.command()
@click.argument("agent_ids", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print what was deleted as JSON.")
@_server
def delete(agent_ids: tuple[str, ...], as_json: bool, base_url: str, api_key: str | None) -> None:
    """Delete agents (their history, state, runs and folder)."""

    async def remove(agents: ManagedAgents) -> list[DeletedManagedAgent]:
        return [await agents.delete(agent_id) for agent_id in agent_ids]

    deleted = _run(base_url, api_key, remove)
    if as_json:
        click.echo(json.dumps([each.model_dump(mode="json") for each in deleted], indent=2))
        return
    for each in deleted:
        click.echo(f"deleted {each.id}")


@click.command()
@click.argument("agent_id")
@click.option("--run", "run_id", default=None, help="Show this run's output (followed live).")
@click.option("--limit", type=click.IntRange(1, 100), default=20, show_default=True)
@_server
def logs(agent_id: str, run_id: str | None, limit: int, base_url: str, api_key: str | None) -> None:
    """An agent's latest runs and messages, or one run's output."""

    async def show(agents: ManagedAgents) -> None:
        if run_id is not None:
            await _show(agents.follow(agent_id, run_id))
            return
        for each in await agents.runs(agent_id, limit=limit):
            error = f"  {each.error.message}" if each.error else ""
            click.echo(f"run {each.id}  {each.trigger}  {each.status}{error}")
        for message in await agents.messages(agent_id, limit=limit):
            who = "you" if message.direction == "user_to_agent" else "agent"
            for call in message.tool_calls or []:
                click.echo(f"  [{call.tool}] {call.arguments} -> {_clip(call.result)}")
            click.echo(f"{who}: {message.content}")

    _run(base_url, api_key, show)


async def _show(events: AsyncIterator[AgentStreamEvent]) -> None:
    """A stream's text to stdout as it comes; its tool calls and results to stderr."""
    from agentloom.api.managed_agent_stream import AgentChunk, ToolCallsEvent

    async for event in events:
        if isinstance(event, AgentChunk):
            for choice in event.choices:
                if choice.delta.content:
                    click.echo(choice.delta.content, nl=False)
        elif isinstance(event, ToolCallsEvent):
            for call in event.tool_calls:
                click.echo(f"[{call.function.name}] {call.function.arguments}", err=True)
        else:
            status = "" if event.success else " (failed)"
            click.echo(f"[{event.tool}]{status} -> {_clip(event.result)}", err=True)
    click.echo()


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= RESULT_CHARS else flat[: RESULT_CHARS - 1] + "…"


COMMANDS = [create, list_agents, send, run, cancel, delete, logs]
