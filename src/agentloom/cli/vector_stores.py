"""``agentloom vector-stores``: create, list, add files (one, many, or whole directories, with
progress), wait for their ingestion, search, delete (``/v1/vector_stores``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentloom.cli.options import fail
from agentloom.cli.output import clock, json_option, print_json, size, table
from agentloom.cli.progress import Progress
from agentloom.cli.remote import Server, server_options

if TYPE_CHECKING:
    import openai
    from openai.types import VectorStore
    from openai.types.vector_stores import VectorStoreFile

__all__ = ["vector_stores"]

POLL_SECONDS = 0.25
SHOWN = 100  # characters of a search hit's text
_timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=600,
    show_default=True,
    help="Seconds to wait for ingestion before giving up (the server goes on).",
)


@click.group("vector-stores")
def vector_stores() -> None:
    """Vector stores: create one, add files or directories, search it."""


@vector_stores.command()
@click.argument("name")
@json_option
@server_options
def create(name: str, as_json: bool, server: Server) -> None:
    """Create a vector store; prints its id."""
    with server.talking() as client:
        made = client.vector_stores.create(name=name)
    if as_json:
        print_json(made)
    else:
        click.echo(made.id)


@vector_stores.command("list")
@json_option
@server_options
def list_stores(as_json: bool, server: Server) -> None:
    """List the vector stores: id, files ingested of all, size, when, name."""
    with server.talking() as client:
        listed = list(client.vector_stores.list())
    if as_json:
        print_json(listed)
    else:
        table(("ID", "FILES", "SIZE", "CREATED", "STATUS", "NAME"), map(_store_row, listed))


@vector_stores.command()
@click.argument("store_id")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--wait/--no-wait", default=True, show_default=True, help="Wait for ingestion.")
@_timeout_option
@json_option
@server_options
def add(
    store_id: str, paths: tuple[Path, ...], wait: bool, timeout: float, as_json: bool,
    server: Server,
) -> None:  # fmt: skip
    """Upload files (directories: every file under them) and add them to a vector store;
    a line per file as it is uploaded and ingested, and the overall progress, on stderr."""
    found = files_under(paths)
    if not found:
        fail(f"no files under {', '.join(map(str, paths))}")
    sizes = {path: path.stat().st_size for path in found}
    progress = Progress(sys.stderr, len(found), sum(sizes.values()))
    with server.talking() as client:
        added = {_upload(client, store_id, path, progress): path for path in found}
        ended = _ingested(client, store_id, added, sizes, progress, timeout) if wait else []
    progress.close()
    _report(ended or [], as_json, expected=len(found) if wait else 0)


@vector_stores.command("wait")
@click.argument("store_id")
@_timeout_option
@json_option
@server_options
def wait_for(store_id: str, timeout: float, as_json: bool, server: Server) -> None:
    """Wait until none of a vector store's files is still being ingested."""
    with server.talking() as client:
        pending = {each.id: Path(each.id) for each in _in_progress(client, store_id)}
        progress = Progress(sys.stderr, len(pending), 0)
        ended = _ingested(client, store_id, pending, {}, progress, timeout)
    progress.close()
    _report(ended, as_json, expected=len(pending))


@vector_stores.command("files")
@click.argument("store_id")
@json_option
@server_options
def list_store_files(store_id: str, as_json: bool, server: Server) -> None:
    """A vector store's files: id, status, size, error."""
    with server.talking() as client:
        listed = list(client.vector_stores.files.list(store_id))
    if as_json:
        print_json(listed)
    else:
        table(("ID", "STATUS", "SIZE", "ERROR"), map(_file_row, listed))


@vector_stores.command()
@click.argument("store_id")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 50), default=5, show_default=True)
@json_option
@server_options
def search(store_id: str, query: str, limit: int, as_json: bool, server: Server) -> None:
    """Search a vector store: score, file, text of each hit."""
    with server.talking() as client:
        hits = list(client.vector_stores.search(store_id, query=query, max_num_results=limit))
    if as_json:
        print_json(hits)
        return
    rows = [
        (f"{hit.score:.3f}", hit.filename, _clip(" ".join(part.text for part in hit.content)))
        for hit in hits
    ]
    table(("SCORE", "FILE", "TEXT"), rows)


@vector_stores.command()
@click.argument("store_id")
@json_option
@server_options
def delete(store_id: str, as_json: bool, server: Server) -> None:
    """Delete a vector store (its files stay in /v1/files)."""
    with server.talking() as client:
        deleted = client.vector_stores.delete(store_id)
    if as_json:
        print_json(deleted)
    else:
        click.echo(f"deleted {deleted.id}")


def files_under(paths: tuple[Path, ...]) -> list[Path]:
    """The files named, and every file under the directories named (hidden ones left out),
    each once, in order."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p, path))
            found |= dict.fromkeys(inside)
        else:
            found[path] = None
    return list(found)


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def _upload(client: openai.OpenAI, store_id: str, path: Path, progress: Progress) -> str:
    """Upload ``path`` and add it to the store; its file id."""
    progress.working(f"uploading {path}")
    made = client.files.create(file=path, purpose="assistants")
    client.vector_stores.files.create(store_id, file_id=made.id)
    progress.stage(str(path), "uploaded", made.id)
    return made.id


def _ingested(
    client: openai.OpenAI,
    store_id: str,
    pending: dict[str, Path],
    sizes: dict[Path, int],
    progress: Progress,
    timeout: float,
) -> list[VectorStoreFile]:
    """Poll until each pending file is through (completed, failed, cancelled) or the deadline;
    the files that got through, in the order they did."""
    pending = dict(pending)
    ended: list[VectorStoreFile] = []
    deadline = time.monotonic() + timeout
    while pending:
        busy = {each.id for each in _in_progress(client, store_id)}
        for file_id in [file_id for file_id in pending if file_id not in busy]:
            got = client.vector_stores.files.retrieve(file_id, vector_store_id=store_id)
            if got.status == "in_progress":
                continue
            path = pending.pop(file_id)
            ended.append(got)
            progress.finished(str(path), sizes.get(path, got.usage_bytes), *_outcome(got))
        if pending and time.monotonic() >= deadline:
            return ended
        if pending:
            progress.working(f"ingesting {len(pending)} file(s)")
            time.sleep(POLL_SECONDS)
    return ended


def _in_progress(client: openai.OpenAI, store_id: str) -> list[VectorStoreFile]:
    return list(client.vector_stores.files.list(store_id, filter="in_progress"))


def _outcome(file: VectorStoreFile) -> tuple[str, str]:
    if file.status == "completed":
        return "ingested", f"{file.id}  {size(file.usage_bytes)}"
    error = f": {file.last_error.message}" if file.last_error else ""
    return "failed", f"{file.id}  {file.status}{error}"


def _report(ended: list[VectorStoreFile], as_json: bool, expected: int) -> None:
    """The files as JSON (with ``--json``); exit 1 when one failed or is not through yet."""
    if as_json:
        print_json(ended)
    failed = [each.id for each in ended if each.status != "completed"]
    waiting = expected - len(ended)
    if failed:
        fail(f"{len(failed)} file(s) failed: {', '.join(failed)}")
    if waiting > 0:
        fail(
            f"{waiting} file(s) still being ingested at the deadline (--timeout); the server "
            "goes on: agentloom vector-stores wait STORE_ID"
        )


def _store_row(store: VectorStore) -> tuple[object, ...]:
    counts = store.file_counts
    files = f"{counts.completed}/{counts.total}"
    return (
        store.id,
        files,
        size(store.usage_bytes),
        clock(store.created_at),
        store.status,
        store.name,
    )


def _file_row(file: VectorStoreFile) -> tuple[object, ...]:
    error = file.last_error.message if file.last_error else None
    return (file.id, file.status, size(file.usage_bytes), error)


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN else flat[: SHOWN - 1] + "…"
