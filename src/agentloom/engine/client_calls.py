"""A call of one of the client's tools while the model streams it: the item it becomes and its
stream events, by kind.

- function: a ``function_call`` (with its ``namespace``), ``function_call_arguments`` events;
- custom: a ``custom_tool_call`` whose ``input`` is decoded text (see
  :mod:`agentloom.engine.freeform`), ``custom_tool_call_input`` events;
- tool_search: a ``tool_search_call`` with the arguments as JSON; no events but the item's;
- shell, local_shell, apply_patch: their own call items (see
  :mod:`agentloom.engine.shell_tools`); a ``shell_call``'s commands are streamed with
  ``response.shell_call_command.*`` events once complete, the others have no events but the
  item's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from agentloom.api import events as ev
from agentloom.api.items import CustomToolCall, FunctionCall, ToolSearchCall
from agentloom.api.shell_items import (
    ApplyPatchCall,
    LocalShellCall,
    ShellCall,
    ShellKindCall,
)
from agentloom.engine.client_tools import ClientTool
from agentloom.engine.freeform import FreeformInput
from agentloom.engine.shell_tools import shell_item
from agentloom.ids import new_id

ClientCall: TypeAlias = FunctionCall | CustomToolCall | ToolSearchCall | ShellKindCall
Status: TypeAlias = Literal["in_progress", "completed"]
_PREFIX = {
    "function": "fc",
    "custom": "ctc",
    "tool_search": "tsc",
    "shell": ShellCall.ID_PREFIX,
    "local_shell": LocalShellCall.ID_PREFIX,
    "apply_patch": ApplyPatchCall.ID_PREFIX,
}


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
        if tool.kind in ("shell", "local_shell", "apply_patch"):
            return shell_item(
                tool.kind, id=self.id, call_id=self.call_id, arguments=arguments, status=status
            )
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
        if isinstance(item, ShellCall):
            return _commands(seq, item, self.index)
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


def _commands(seq: Callable[[], int], item: ShellCall, index: int) -> list[ev.StreamEvent]:
    """Each command of a shell call: added (empty), its text, done."""
    events: list[ev.StreamEvent] = []
    for position, command in enumerate(item.action.commands):
        where = {"output_index": index, "command_index": position}
        events.append(ev.ShellCallCommandAdded(sequence_number=seq(), command="", **where))
        events.append(ev.ShellCallCommandDelta(sequence_number=seq(), delta=command, **where))
        events.append(ev.ShellCallCommandDone(sequence_number=seq(), command=command, **where))
    return events


def _json(arguments: str) -> object:
    """A tool search's arguments as JSON (as they came, if they are not)."""
    try:
        value: object = json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments
    return value
