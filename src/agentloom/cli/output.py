"""How the commands that talk to a server print what they got: ``--json`` prints the API
objects as one JSON document (for scripts), else a table a person reads."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias

import click

__all__ = ["Decorator", "clock", "json_option", "plain", "print_json", "size", "table"]

Decorator: TypeAlias = Callable[[Callable[..., None]], Callable[..., None]]

json_option: Decorator = click.option(
    "--json", "as_json", is_flag=True, help="Print the API objects as JSON (one document)."
)


def plain(value: Any) -> Any:
    """An API object (a pydantic model of the ``openai`` package, or decoded JSON) as plain
    JSON data, the fields the server sent and nothing the SDK defaulted."""
    if isinstance(value, list | tuple):
        return [plain(each) for each in value]
    if isinstance(value, dict):
        return {key: plain(each) for key, each in value.items()}
    dump = getattr(value, "model_dump", None)
    if dump is None:
        return value
    # the SDK's objects hold what the server sent; agentloom's own leave out what they should
    sent = type(value).__module__.startswith("openai.")
    return dump(mode="json", exclude_unset=sent)


def print_json(value: Any) -> None:
    """``value`` as one indented JSON document on stdout."""
    click.echo(json.dumps(plain(value), ensure_ascii=False, indent=2))


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Columns padded to their widest cell (the last one left ragged); nothing but the
    headers when there are no rows."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    for row in [list(headers), *cells]:
        padded = [text.ljust(width) for text, width in zip(row[:-1], widths, strict=False)]
        click.echo("  ".join([*padded, row[-1]]).rstrip())


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return str(value).translate(_ONE_LINE)


_ONE_LINE = str.maketrans("\n\r\t", "   ")


def clock(seconds: float | None) -> str:
    """A unix time as the local ``YYYY-MM-DD HH:MM``."""
    if seconds is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def size(count: float | None) -> str:
    """Bytes as ``512 B``, ``1.5 KiB``, ``3.2 MiB`` ..."""
    if count is None:
        return "-"
    if count < 1024:
        return f"{count:.0f} B"
    for unit in ("KiB", "MiB"):
        count /= 1024
        if count < 1024:
            return f"{count:.1f} {unit}"
    return f"{count / 1024:.1f} GiB"
