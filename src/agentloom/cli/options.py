"""What ``agentloom ask`` and ``agentloom chat`` share: their options, and clean failures.

Importing this module costs only click: the agent machinery is imported when a command runs,
so ``agentloom --version`` and ``agentloom serve`` stay fast.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

import click

from agentloom.frozen import frozen

if TYPE_CHECKING:
    from agentloom.agents.builders import AgentOptions
    from agentloom.agents.connection import Connection
    from agentloom.llm.types import Path

__all__ = ["AgentChoice", "agent_options", "clean_errors", "fail", "user_error"]

Command: TypeAlias = Callable[..., None]
Decorator: TypeAlias = Callable[[Command], Command]


@frozen
class AgentChoice:
    """The agent, tools and model a command runs, as given on the command line."""

    agent: str
    tools: tuple[str, ...]
    model: str | None
    base_url: str | None
    api_key: str | None
    path: Path | None
    max_turns: int
    instructions: str | None
    config: FilePath | None

    def connection(self) -> Connection:
        """The model and endpoint; with no model named, the server's only chat model."""
        from agentloom.agents.connection import resolve_connection
        from agentloom.cli.models import server_model

        return resolve_connection(
            model=self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            path=self.path,
            config=self.config,
            server_model=server_model,
        )

    def options(self) -> AgentOptions:
        from agentloom.agents.builders import AgentOptions

        return AgentOptions(instructions=self.instructions, max_turns=self.max_turns)


def _tool_names(
    _ctx: click.Context, _param: click.Parameter, value: Sequence[str]
) -> tuple[str, ...]:
    """``--tools a,b --tools c`` -> ``("a", "b", "c")``."""
    return tuple(name.strip() for given in value for name in given.split(",") if name.strip())


_OPTIONS: tuple[Decorator, ...] = (
    click.option(
        "--agent", default="orchestrator", show_default=True, help="Strategy (agentloom agents)."
    ),
    click.option(
        "--tools",
        multiple=True,
        callback=_tool_names,
        help="Comma-separated tool names (agentloom tools); repeatable.",
    ),
    click.option(
        "--model",
        default=None,
        help="Model name [env AGENTLOOM_MODEL; default: the server's only chat model].",
    ),
    click.option(
        "--base-url",
        default=None,
        help="OpenAI-compatible endpoint [env AGENTLOOM_BASE_URL; default: a local agentloom].",
    ),
    click.option("--api-key", default=None, help="API key [env AGENTLOOM_API_KEY]."),
    click.option(
        "--path",
        type=click.Choice(["completions", "responses"]),
        default=None,
        help="Force Chat Completions or Responses (default: by model).",
    ),
    click.option(
        "--max-turns",
        default=10,
        show_default=True,
        type=click.IntRange(min=1),
        help="Model turns before the agent stops.",
    ),
    click.option("--instructions", default=None, help="System prompt for the agent."),
    click.option(
        "--config",
        default=None,
        type=click.Path(dir_okay=False, path_type=FilePath),
        help="TOML configuration (its first provider; tool settings).",
    ),
)


def agent_options(command: Command) -> Command:
    """Add the agent, tool and connection options; the command gets them as one
    ``choice: AgentChoice`` keyword argument."""

    def with_choice(*args: Any, **kwargs: Any) -> None:
        given = {name: kwargs.pop(name) for name in AgentChoice.__dataclass_fields__}
        command(*args, choice=AgentChoice(**given), **kwargs)

    wrapped: Command = functools.update_wrapper(with_choice, command)
    for option in reversed(_OPTIONS):
        wrapped = option(wrapped)
    return wrapped


def fail(message: str) -> NoReturn:
    """One line on stderr, exit code 1: no traceback."""
    click.echo(f"agentloom: {message}", err=True)
    sys.exit(1)


@contextmanager
def clean_errors() -> Iterator[None]:
    """Errors a user can act on (configuration, names, the model's endpoint) as one line on
    stderr and exit code 1; anything else is a bug and keeps its traceback."""
    try:
        yield
    except Exception as exc:
        message = user_error(exc)
        if message is None:
            raise
        fail(message)


_NOT_FOUND_HINT = (
    "A 404 means no such model there (check --model; the server lists its models at"
    " GET /v1/models) or no such API: --path completions or --path responses picks Chat"
    " Completions or Responses (an agentloom server serves both)."
)


def user_error(exc: Exception) -> str | None:
    """The one-line message for an error a user can act on; ``None`` for anything else."""
    import openai

    from agentloom.config import ConfigError
    from agentloom.errors import AgentloomError, UpstreamError

    if isinstance(exc, UpstreamError) and exc.status == 404:
        return f"the model's endpoint failed: {exc.message}. {_NOT_FOUND_HINT}"
    if isinstance(exc, UpstreamError):
        return f"the model's endpoint failed: {exc.message}"
    if isinstance(exc, AgentloomError):
        return exc.message
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, openai.APIError):
        return f"the model's endpoint failed: {exc.message}"
    return None
