"""A call of one of the client's tools while the model streams it: the item it becomes and its
stream events, by kind.

- function: a ``function_call`` (with its ``namespace``), ``function_call_arguments`` events;
- custom: a ``custom_tool_call`` whose ``input`` is decoded text (see
  :mod:`agentloom.engine.freeform`), ``custom_tool_call_input`` events;
- tool_search: a ``tool_search_call`` with the arguments as JSON; no events but the item's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from agentloom.api import events as ev
from agentloom.api.items import CustomToolCall, FunctionCall, ToolSearchCall
from agentloom.engine.client_tools import ClientTool
from agentloom.engine.freeform import FreeformInput
from agentloom.ids import new_id

ClientCall: TypeAlias = FunctionCall | CustomToolCall | ToolSearchCall
Status: TypeAlias = Literal["in_progress", "completed"]
_PREFIX = {"function": "fc", "custom": "ctc", "tool_search": "tsc"}


@dataclass
class OpenCall:
    id: str
    index: int  # output index
    call_id: str
    tool: ClientTool
    chunks: list[str] = field(default_factory=list)  # the arguments as they came
    freeform: FreeformInput = field(default_factory=FreeformInput)

    @classmethod
    def open(cls, tool: ClientTool, *, call_id: str, index: int) -> OpenCall:
        return cls(id=new_id(_PREFIX[tool.kind]), index=index, call_id=call_id, tool=tool)

    def item(self, status: Status) -> ClientCall:
        done, tool = status == "completed", self.tool
        arguments = "".join(self.chunks) if done else ""
        if tool.kind == "custom":
            text = self.freeform.finish() if done else ""
            return CustomToolCall(
                id=self.id,
                call_id=self.call_id,
                name=tool.name,
                input=text,
                namespace=tool.namespace,
                status=status,
            )
        if tool.kind == "tool_search":
            return ToolSearchCall(
                id=self.id, call_id=self.call_id, arguments=_json(arguments), status=status
            )
        return FunctionCall(
            id=self.id,
            call_id=self.call_id,
            name=tool.name,
            arguments=arguments,
            namespace=tool.namespace,
            status=status,
        )

    def delta(self, seq: Callable[[], int], arguments: str) -> list[ev.StreamEvent]:
        """Take a piece of the arguments; the events telling it (numbered by ``seq``)."""
        self.chunks.append(arguments)
        if self.tool.kind == "function":
            return [
                ev.FunctionCallArgumentsDelta(
                    sequence_number=seq(), item_id=self.id, output_index=self.index, delta=arguments
                )
            ]
        text = self.freeform.feed(arguments) if self.tool.kind == "custom" else ""
        if not text:
            return []
        return [
            ev.CustomToolCallInputDelta(
                sequence_number=seq(), item_id=self.id, output_index=self.index, delta=text
            )
        ]

    def done(self, seq: Callable[[], int], item: ClientCall) -> list[ev.StreamEvent]:
        """The events closing the arguments of ``item`` (this call, completed)."""
        if isinstance(item, CustomToolCall):
            return [
                ev.CustomToolCallInputDone(
                    sequence_number=seq(),
                    item_id=self.id,
                    output_index=self.index,
                    input=item.input,
                )
            ]
        if isinstance(item, FunctionCall):
            return [
                ev.FunctionCallArgumentsDone(
                    sequence_number=seq(),
                    item_id=self.id,
                    output_index=self.index,
                    name=item.name,
                    arguments=item.arguments,
                )
            ]
        return []


def _json(arguments: str) -> object:
    """A tool search's arguments as JSON (as they came, if they are not)."""
    try:
        value: object = json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments
    return value
