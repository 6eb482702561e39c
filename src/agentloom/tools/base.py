"""The server-side tool seam: a tool the server runs itself when the model calls it.

A server tool is offered to the model as a function. When the model calls it, the agent loop
runs it: the tool streams its own events (``response.file_search_call.searching`` ...), then
hands back a :class:`ToolResult` — the output item the response shows, what the model is told,
and the sources the final answer may cite.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Protocol, TypeAlias

from agentloom.api import events as ev
from agentloom.api.items import OutputItem, StoredItem
from agentloom.frozen import frozen
from agentloom.inference import base as inf


@frozen
class Source:
    """A passage a tool found, which the answer may cite as ``[number]``: from a file
    (``file_id``, ``filename``) or, when ``url`` is set, from a web page (``title``)."""

    number: int
    file_id: str
    filename: str
    text: str
    url: str | None = None
    title: str | None = None

    @classmethod
    def web(cls, number: int, url: str, title: str, text: str) -> Source:
        return cls(number, file_id="", filename=title, text=text, url=url, title=title)


@frozen
class ToolResult:
    item: OutputItem  # the finished call item (``file_search_call`` ...)
    output: str  # what the model is told
    sources: tuple[Source, ...] = ()
    awaits_client: bool = False  # the response ends here for the client (an approval request)


@frozen
class ToolCallContext:
    """Where a call's item sits in the response, and how to number its events and sources."""

    item_id: str
    output_index: int
    seq: Callable[[], int]
    first_source: int = 1  # the number the call's first source gets
    approval_request_id: str | None = None  # the client approved this call (``mcp``)


ToolStep: TypeAlias = ev.StreamEvent | ToolResult
"""What a running tool yields: its events, then one result (last)."""


class ServerTool(Protocol):
    """A tool the server runs. ``kind`` is its type in requests (``file_search``); ``spec``
    is the function the model is offered. New tools register in :mod:`agentloom.tools.server_tools`;
    the agent loop runs their calls (``AgentLoop._run_server_tool``)."""

    @property
    def kind(self) -> str: ...

    @property
    def item_prefix(self) -> str:
        """The prefix of its call items' ids (``fs`` -> ``fs_...``)."""
        ...

    @property
    def spec(self) -> inf.FunctionSpec: ...

    async def check(self) -> None:
        """Fail with a 4xx before the response starts if the tool cannot run (an unknown
        vector store ...)."""
        ...

    def item(self, context: ToolCallContext, arguments: str) -> OutputItem:
        """The call's item as it is announced (``in_progress``), before it runs."""
        ...

    def run(self, context: ToolCallContext, arguments: str) -> AsyncIterator[ToolStep]: ...


@frozen
class ToolsetContext:
    """Where a toolset's listing item sits; ``earlier`` are the items the model saw before
    (a listing there is reused); ``stack`` holds the connections until the response ends."""

    item_id: str
    output_index: int
    seq: Callable[[], int]
    earlier: Sequence[StoredItem]
    stack: AsyncExitStack


@frozen
class Listed:
    """What a toolset offers once open: its listing item (``None``: an earlier one reused)
    and its tools."""

    item: OutputItem | None
    tools: tuple[ServerTool, ...]
    prefix: str = ""  # put before a tool's name when another tool has it (``label__name``)


ToolsetStep: TypeAlias = ev.StreamEvent | Listed
"""What an opening toolset yields: its events (``output_item.added`` ... ``done``), then one
:class:`Listed` (last)."""


class Toolset(Protocol):
    """Server tools known only once a remote source is asked (an MCP server's ``tools/list``).
    The agent loop opens each toolset before the first model call and offers its tools."""

    @property
    def kind(self) -> str: ...

    async def check(self) -> None:
        """Fail with a 4xx before the response starts (a server URL the policy refuses)."""
        ...

    def open(self, context: ToolsetContext) -> AsyncIterator[ToolsetStep]: ...
