"""The items server tools make, as the rest of the server needs to know them.

Each server tool's module defines one :class:`ToolItem` for the item kind it outputs: how a chat
backend is shown it when a later turn replays the history, how it reads in a compaction
transcript, and what is left of it when a guardrail blocks its output. The table of them is
:data:`agentloom.tools.server_tools.TOOL_ITEMS`; the engine looks kinds up there instead of
testing types, so a new server tool touches its own module and one registration line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from agentloom.api.wire import WireModel
from agentloom.frozen import frozen
from agentloom.inference.base import ToolCall

I = TypeVar("I", bound=WireModel)  # noqa: E741


@frozen
class Replayed:
    """A server tool's item as a chat backend sees it: the assistant's call, then the tool's
    answer."""

    call: ToolCall
    output: str


@frozen
class ToolItem(Generic[I]):
    kind: type[I]
    replayed: Callable[[I], Replayed]
    line: Callable[[I], str]  # one paragraph of a compaction transcript
    redacted: Callable[[I, str], I]  # its output replaced by the given notice

    @property
    def type(self) -> str:
        """The item's ``type`` tag."""
        tag: Any = self.kind.model_fields["type"].default
        return str(tag)
