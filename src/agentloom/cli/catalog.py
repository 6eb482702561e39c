"""``agentloom agents`` and ``agentloom tools``: what the registry offers (``agentloom agents``
with a command manages agents on a server: :mod:`agentloom.cli.managed`)."""

from __future__ import annotations

from collections.abc import Iterable

import click

__all__ = ["agents", "tools"]


@click.group(invoke_without_command=True)
@click.pass_context
def agents(context: click.Context) -> None:
    """List the agent strategies (for --agent); with a command, manage the agents that live on
    a server (create, list, send, run, logs)."""
    if context.invoked_subcommand is not None:
        return
    from agentloom.agents.builders import AGENTS
    from agentloom.agents.registry import discover_plugins

    discover_plugins()
    _table((name, entry.description) for name, entry in AGENTS.items())


@click.command()
def tools() -> None:
    """List the built-in tools (for --tools)."""
    from agentloom.agents.builders import MCP_PREFIX, TOOLS
    from agentloom.agents.registry import discover_plugins

    discover_plugins()
    rows = [(name, entry.description) for name, entry in TOOLS.items()]
    rows.append((f"{MCP_PREFIX}<label>", "Every tool of a [[mcp.servers]] server (--config)"))
    _table(rows)


def _table(rows: Iterable[tuple[str, str]]) -> None:
    listed = list(rows)
    width = max((len(name) for name, _ in listed), default=0)
    for name, description in listed:
        click.echo(f"{name.ljust(width)}  {description}")
