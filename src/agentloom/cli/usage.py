"""``agentloom usage``: the organization's usage report (``/v1/organization/usage/{kind}``,
with the admin key) as a compact table: a row per bucket and group that used anything."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import click

from agentloom.cli.output import json_option, print_json, table
from agentloom.cli.remote import Server, admin_options, get_json

if TYPE_CHECKING:
    import openai

__all__ = ["usage"]

KINDS = (
    "completions",
    "embeddings",
    "file_search_calls",
    "web_search_calls",
    "code_interpreter_sessions",
)
GROUPS = ("model", "project_id", "api_key_id")
WIDTHS = {"1m": 60, "1h": 3600, "1d": 86400}
NOT_COUNTS = frozenset({"object", *GROUPS})


@click.command()
@click.option("--kind", type=click.Choice(KINDS), default="completions", show_default=True)
@click.option("--days", type=click.FloatRange(min=0, min_open=True), default=7, show_default=True)
@click.option("--bucket", type=click.Choice(tuple(WIDTHS)), default="1d", show_default=True)
@click.option(
    "--by", "group_by", multiple=True, type=click.Choice(GROUPS), help="Group by; repeatable."
)
@click.option("--project", "project_ids", multiple=True, help="Only this project; repeatable.")
@json_option
@admin_options
def usage(
    kind: str, days: float, bucket: str, group_by: tuple[str, ...],
    project_ids: tuple[str, ...], as_json: bool, server: Server,
) -> None:  # fmt: skip
    """Usage over the last --days (admin key): tokens and requests per bucket."""
    start = _bucket_start(time.time() - days * 86400, WIDTHS[bucket])
    query: dict[str, Any] = {"start_time": start, "bucket_width": bucket}
    query |= {"group_by": list(group_by) or None, "project_ids": list(project_ids) or None}
    with server.talking() as client:
        buckets = _buckets(client, f"/organization/usage/{kind}", query)
    if as_json:
        print_json(buckets)
        return
    rows = [(bucket_, result) for bucket_ in buckets for result in bucket_["results"]]
    if not rows:
        click.echo(f"no {kind} usage in the last {days:g} days")
        return
    counts = [key for key in rows[0][1] if key not in NOT_COUNTS]
    when = "%Y-%m-%d" if bucket == "1d" else "%Y-%m-%d %H:%M"
    body = [
        (_time(b["start_time"], when), *(r.get(g) for g in group_by), *(r.get(c) for c in counts))
        for b, r in rows
    ]
    totals = [sum(int(r.get(c) or 0) for _, r in rows) for c in counts]
    body.append(("total", *("" for _ in group_by), *totals))
    table(("START", *(g.upper() for g in group_by), *(c.upper() for c in counts)), body)


def _buckets(client: openai.OpenAI, path: str, query: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page's buckets."""
    buckets: list[dict[str, Any]] = []
    page: str | None = None
    while True:
        answer = get_json(client, path, **query, page=page)
        buckets += answer["data"]
        page = answer.get("next_page")
        if not answer.get("has_more") or page is None:
            return buckets


def _bucket_start(at: float, width: int) -> int:
    return int(at // width * width)


def _time(seconds: int, layout: str) -> str:
    return time.strftime(layout, time.gmtime(seconds))
