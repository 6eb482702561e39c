"""``agentloom files upload/list/get/delete``: the server's files (``/v1/files``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentloom.cli.output import clock, json_option, print_json, size, table
from agentloom.cli.remote import Server, server_options

if TYPE_CHECKING:
    from openai.types import FileObject

__all__ = ["files"]

PURPOSES = ("assistants", "user_data", "batch", "fine-tune", "vision", "evals")
HEADERS = ("ID", "SIZE", "CREATED", "PURPOSE", "NAME")


@click.group()
def files() -> None:
    """Upload, list, show and delete the server's files."""


@files.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--purpose", type=click.Choice(PURPOSES), default="assistants", show_default=True)
@json_option
@server_options
def upload(paths: tuple[str, ...], purpose: str, as_json: bool, server: Server) -> None:
    """Upload files; prints each one's id."""
    uploaded: list[FileObject] = []
    with server.talking() as client:
        for path in paths:
            with Path(path).open("rb") as content:
                made = client.files.create(file=content, purpose=purpose)  # type: ignore[arg-type]
            uploaded.append(made)
            if not as_json:
                click.echo(f"{made.id}  {made.filename}")
    if as_json:
        print_json(uploaded)


@files.command("list")
@click.option("--purpose", default=None, help="Only files of this purpose.")
@json_option
@server_options
def list_files(purpose: str | None, as_json: bool, server: Server) -> None:
    """List the files: id, size, when, purpose, name."""
    with server.talking() as client:
        listed = list(client.files.list(purpose=purpose) if purpose else client.files.list())
    if as_json:
        print_json(listed)
    else:
        table(HEADERS, (_row(each) for each in listed))


@files.command()
@click.argument("file_id")
@click.option(
    "--output", "-o", default=None, help="Write the file's content here ('-': stdout) instead."
)
@json_option
@server_options
def get(file_id: str, output: str | None, as_json: bool, server: Server) -> None:
    """Show a file, or write its content (--output)."""
    with server.talking() as client:
        if output is not None:
            content = client.files.content(file_id).content
            _write(content, output)
            return
        found = client.files.retrieve(file_id)
    if as_json:
        print_json(found)
    else:
        table(HEADERS, [_row(found)])


@files.command()
@click.argument("file_ids", nargs=-1, required=True)
@json_option
@server_options
def delete(file_ids: tuple[str, ...], as_json: bool, server: Server) -> None:
    """Delete files (and their chunks in every vector store)."""
    with server.talking() as client:
        deleted = [client.files.delete(file_id) for file_id in file_ids]
    if as_json:
        print_json(deleted)
    else:
        for each in deleted:
            click.echo(f"deleted {each.id}")


def _row(file: FileObject) -> tuple[object, ...]:
    return (file.id, size(file.bytes), clock(file.created_at), file.purpose, file.filename)


def _write(content: bytes, output: str) -> None:
    if output == "-":
        click.echo(content, nl=False)
    else:
        Path(output).write_bytes(content)
        click.echo(f"wrote {size(len(content))} to {output}", err=True)
