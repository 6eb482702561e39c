"""``agentloom responses list/show`` (also ``agentloom logs``): the stored responses
(``GET /v1/responses``, an agentloom extension) and one with its trace
(``GET /v1/responses/{id}/trace``) drawn as a waterfall."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from agentloom.cli.output import clock, json_option, print_json, table
from agentloom.cli.remote import Server, get_json, server_options

if TYPE_CHECKING:
    import openai

__all__ = ["responses"]

STATUSES = ("completed", "failed", "in_progress", "cancelled", "queued", "incomplete")
SHOWN = 60  # characters of a response's output in the list
BAR = 30  # characters of the waterfall's widest bar
TRACE_MISSING = ("trace_not_ready", "trace_not_found")


@click.group()
def responses() -> None:
    """The stored responses: list them, show one with its trace."""


@responses.command("list")
@click.option("--limit", type=click.IntRange(1, 100), default=20, show_default=True)
@click.option("--model", default=None, help="Only responses of this model.")
@click.option("--status", type=click.Choice(STATUSES), default=None)
@click.option("--after", default=None, help="The page after this response id.")
@json_option
@server_options
def list_responses(
    limit: int, model: str | None, status: str | None, after: str | None, as_json: bool,
    server: Server,
) -> None:  # fmt: skip
    """The latest responses: id, when, status, model, tokens, output."""
    with server.talking() as client:
        page = get_json(client, "/responses", limit=limit, model=model, status=status, after=after)
    listed: list[dict[str, Any]] = page["data"]
    if as_json:
        print_json(listed)
        return
    table(("ID", "CREATED", "STATUS", "MODEL", "TOKENS", "OUTPUT"), map(_row, listed))
    if page.get("has_more"):
        click.echo(f"(more: --after {page['last_id']})", err=True)


@responses.command()
@click.argument("response_id")
@json_option
@server_options
def show(response_id: str, as_json: bool, server: Server) -> None:
    """A response: its status, usage, output, and the trace of its run."""
    with server.talking() as client:
        response = client.responses.retrieve(response_id)
        trace = _trace(client, response_id)
    if as_json:
        print_json({"response": response, "trace": trace})
        return
    usage = response.usage
    tokens = f"{usage.input_tokens} in, {usage.output_tokens} out" if usage else "-"
    click.echo(f"{response.id}  {response.status}  {response.model}  {clock(response.created_at)}")
    click.echo(f"tokens: {tokens}")
    if response.error is not None:
        click.echo(f"error: {response.error.message} ({response.error.code})")
    click.echo(f"output: {response.output_text}" if response.output_text else "output: -")
    _waterfall(trace)


def _trace(client: openai.OpenAI, response_id: str) -> dict[str, Any] | None:
    """The run's trace; ``None`` while it runs or when none was recorded."""
    import openai

    try:
        trace: dict[str, Any] = get_json(client, f"/responses/{response_id}/trace")
    except openai.NotFoundError as exc:
        if exc.code in TRACE_MISSING:
            return None
        raise
    return trace


def _waterfall(trace: dict[str, Any] | None) -> None:
    """Each span on a line: when it started and how long it took (ms), a bar placing it in
    the run, its name."""
    if trace is None:
        click.echo("trace: none (the response is still running, or none was recorded)")
        return
    total = max(float(trace["duration_ms"]), 1e-9)
    click.echo(f"trace: {trace['duration_ms']:.1f} ms, {len(trace['spans'])} spans")
    rows = []
    for span in trace["spans"]:
        start, duration = float(span["start_ms"]), float(span["duration_ms"])
        lead = round(start / total * BAR)
        width = max(1, round(duration / total * BAR))
        bar = (" " * lead + "█" * width).ljust(BAR + 1)
        failed = f" ({span.get('error') or 'error'})" if span["status"] == "error" else ""
        rows.append((f"{start:.1f}", f"{duration:.1f}", bar, span["name"] + failed))
    table(("START", "MS", "", "SPAN"), rows)
    if trace.get("truncated"):
        click.echo("(spans were left out: a run keeps 256 at most)")


def _row(response: dict[str, Any]) -> tuple[object, ...]:
    usage = response.get("usage") or {}
    return (
        response["id"],
        clock(response.get("created_at")),
        response.get("status"),
        response.get("model"),
        usage.get("total_tokens"),
        _clip(_output_text(response)),
    )


def _output_text(response: dict[str, Any]) -> str:
    parts = [
        part.get("text", "")
        for item in response.get("output") or []
        if item.get("type") == "message"
        for part in item.get("content") or []
        if part.get("type") == "output_text"
    ]
    return "".join(parts)


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN else flat[: SHOWN - 1] + "…"
