"""The ``agentloom`` command line.

Starting it imports click and the command modules alone: each command imports what it works
with when it runs (``tests/test_cli_imports.py`` holds ``--version`` and ``--help`` to that), and
``serve`` reads and checks its configuration before it imports the server.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agentloom import __version__
from agentloom.cli.admin import keys, projects
from agentloom.cli.ask import ask
from agentloom.cli.catalog import agents, tools
from agentloom.cli.chat import chat
from agentloom.cli.evals import evals
from agentloom.cli.files import files
from agentloom.cli.managed import COMMANDS as MANAGED_AGENT_COMMANDS
from agentloom.cli.models import models
from agentloom.cli.responses import responses
from agentloom.cli.usage import usage
from agentloom.cli.vector_stores import vector_stores

if TYPE_CHECKING:
    from agentloom.config import Settings

WORKER_HEALTHCHECK_SECONDS = 30  # with --workers: a worker silent this long has hung


@click.group()
@click.version_option(__version__, prog_name="agentloom")
def main() -> None:
    """agentloom: an OpenAI-compatible Responses API server and agent SDK."""


@main.command()
@click.option("--host", default=None, help="Interface to bind (default 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port to listen on (default 8321).")
@click.option(
    "--config",
    "config_path",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="TOML configuration file.",
)
@click.option("--log-level", default="info", show_default=True)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default=None,
    help="Log lines as text or one JSON object each (default [logging] format: text).",
)
@click.option(
    "--access-log/--no-access-log",
    default=None,
    help="A log line per HTTP request (default [logging] access_log: off).",
)
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(min=1),
    help="Server processes sharing the port and the database (default 1).",
)
def serve(
    host: str | None,
    port: int | None,
    config_path: Path | None,
    log_level: str,
    log_format: str | None,
    access_log: bool | None,
    workers: int | None,
) -> None:
    """Run the API server."""
    settings = _settings(config_path, host, port, workers)
    settings = _logging(settings, log_format, access_log)
    refusal = exposed_without_auth(settings)
    if refusal is not None:
        click.echo(f"agentloom: {refusal}", err=True)
        sys.exit(2)
    import uvicorn

    from agentloom import logs
    from agentloom.metrics_shared import DIRECTORY_ENV
    from agentloom.server.app import create_app
    from agentloom.server.banner import ONCE_ENV
    from agentloom.server.connections import guarded_protocol
    from agentloom.server.workers import CONFIG_ENV, LOG_LEVEL_ENV, WORKER_APP

    logs.configure(log_level, settings.logging.format, access=settings.logging.access_log)
    common: dict[str, Any] = {
        "host": settings.server.host,
        "port": settings.server.port,
        "log_level": log_level,
        "log_config": None,  # uvicorn's lines go through the same handler (logs.configure)
        "access_log": False,
        # an answer's head and body in one send; deadlines on a request's head and body, a
        # most connections (server/connections.py)
        "http": guarded_protocol(settings.server),
        "timeout_keep_alive": settings.server.keep_alive_timeout,
        "timeout_graceful_shutdown": 5,
        # A WebSocket message may be as large as an HTTP body; past it the WebSocket layer
        # closes the connection (1009, message too big) without reading the message.
        "ws_max_size": settings.server.max_body_bytes,
    }
    if settings.server.workers == 1:
        uvicorn.run(create_app(settings, serving=True), **common)
        return
    # Each worker process builds its own app (and runtime) from the same configuration.
    if config_path is not None:
        os.environ[CONFIG_ENV] = str(config_path.resolve())
    os.environ[LOG_LEVEL_ENV] = log_level
    marker = Path(tempfile.gettempdir()) / f"agentloom-banner-{os.getpid()}"
    os.environ[ONCE_ENV] = str(marker)  # the first worker up says the banner
    shared = tempfile.TemporaryDirectory(prefix="agentloom-metrics-")
    os.environ[DIRECTORY_ENV] = shared.name  # each worker's metrics, for every scrape
    os.environ["AGENTLOOM_LOG_FORMAT"] = settings.logging.format
    os.environ["AGENTLOOM_ACCESS_LOG"] = str(settings.logging.access_log).lower()
    try:
        # uvicorn kills a worker that answers no health ping within 5 s and starts another;
        # a worker still importing on a loaded host takes longer, and was killed again and
        # again (never serving): a worker silent for 30 s has hung
        uvicorn.run(
            WORKER_APP,
            factory=True,
            workers=settings.server.workers,
            timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
            **common,
        )
    finally:
        marker.unlink(missing_ok=True)
        shared.cleanup()
        for run_only in (ONCE_ENV, DIRECTORY_ENV):  # this run's: nothing after it may read them
            os.environ.pop(run_only, None)


def exposed_without_auth(settings: Settings) -> str | None:
    """Why ``serve`` must not start: bound beyond loopback with no authentication chosen."""
    if settings.auth.mode is not None or _loopback(settings.server.host):
        return None
    return (
        f"refusing to serve on {settings.server.host} without authentication: anyone who can "
        "reach it could read and delete every stored object. Turn API keys on "
        '([auth] mode = "keys" or AGENTLOOM_AUTH=keys, with an admin key in '
        'AGENTLOOM_ADMIN_KEY; see docs/auth.md), or accept the risk with [auth] mode = "none" '
        "(AGENTLOOM_AUTH=none)."
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _settings(
    config_path: Path | None, host: str | None, port: int | None, workers: int | None
) -> Settings:
    from agentloom.config import ConfigError, load_settings

    try:
        settings = load_settings(config_path)
    except ConfigError as exc:
        click.echo(f"agentloom: {exc}", err=True)
        sys.exit(2)
    flags = {"host": host, "port": port, "workers": workers}
    server = settings.server.model_copy(update={k: v for k, v in flags.items() if v is not None})
    return settings.model_copy(update={"server": server})


def _logging(settings: Settings, log_format: str | None, access_log: bool | None) -> Settings:
    """``[logging]`` with the command line's flags applied."""
    flags = {"format": log_format, "access_log": access_log}
    chosen = settings.logging.model_copy(update={k: v for k, v in flags.items() if v is not None})
    return settings.model_copy(update={"logging": chosen})


main.add_command(ask)
main.add_command(chat)
main.add_command(agents)
for command in MANAGED_AGENT_COMMANDS:
    agents.add_command(command)
main.add_command(tools)
main.add_command(evals)
main.add_command(keys)
main.add_command(projects)
main.add_command(files)
main.add_command(vector_stores)
main.add_command(responses)
main.add_command(responses, name="logs")
main.add_command(models)
main.add_command(usage)

if __name__ == "__main__":
    main()
