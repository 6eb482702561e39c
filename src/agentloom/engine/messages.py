"""Turn Responses items into the chat messages a backend understands.

Consecutive function calls (and the reasoning before them) become one assistant message carrying
``tool_calls``; function call outputs become tool messages; system and developer messages become
system messages (backends differ in their support of the developer role). Calls of namespaced
and custom tools are shown under the names the backend is offered them by (see
:mod:`agentloom.engine.client_tools`).

A ``compaction`` item replaces earlier items with its summary (see :func:`visible`): the items
it replaces are left out and its summary is told as a system message where they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from agentloom.api.content import InputFile, InputImage, InputText, OutputText, Refusal
from agentloom.api.items import (
    Compaction,
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    McpApprovalRequest,
    McpApprovalResponse,
    Message,
    Reasoning,
    StoredItem,
    ToolSearchCall,
    ToolSearchOutput,
)
from agentloom.api.shell_items import ShellKindCall, ShellKindOutput
from agentloom.engine import mcp_history
from agentloom.engine.attachments import Attachment, FileImage, FileText
from agentloom.engine.client_tools import chat_call, found_text
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.frozen import frozen
from agentloom.inference.base import (
    ChatMessage,
    ContentPart,
    FilePart,
    ImagePart,
    TextPart,
    ToolCall,
)
from agentloom.tools.items import Replayed
from agentloom.tools.server_tools import TOOL_ITEMS

_ClientCall: TypeAlias = FunctionCall | CustomToolCall | ToolSearchCall | ShellKindCall
_ClientOutput: TypeAlias = (
    FunctionCallOutput | CustomToolCallOutput | ToolSearchOutput | ShellKindOutput
)
_CALL_TYPES: tuple[str, ...] = (
    "function_call",
    "custom_tool_call",
    "tool_search_call",
    "shell_call",
    "local_shell_call",
    "apply_patch_call",
)
_OUTPUT_TYPES: tuple[str, ...] = (
    "function_call_output",
    "custom_tool_call_output",
    "tool_search_output",
    "shell_call_output",
    "local_shell_call_output",
    "apply_patch_call_output",
)

SUMMARY_HEADING = (
    "Summary of the earlier conversation (it stands in for the messages and tool results it "
    "covers):\n"
)


@frozen
class Summary:
    """What a compaction item says: the summary, and the id of the last item it replaces
    (``None``: it replaces the items before it that are not input messages)."""

    text: str
    through: str | None


class SummaryReader(Protocol):
    """Opens a compaction item's sealed summary; ``param`` names the item in errors (``None``
    for items already accepted)."""

    def __call__(self, item: Compaction, *, param: str | None) -> Summary: ...


def _no_reader(item: Compaction, *, param: str | None) -> Summary:
    raise InvalidRequestError("Compaction items are not accepted here.", param=param)


@frozen
class Head:
    """What comes before every item: the instructions (a system message), and a prompt's
    image and file values (a user message)."""

    instructions: str | None = None
    media: Message | None = None

    def messages(self) -> list[ChatMessage]:
        head = [ChatMessage(role="system", content=self.instructions)] if self.instructions else []
        if self.media is not None:
            head.append(_from_message(self.media, param=None, files={}))
        return head


@dataclass
class ChatHistory:
    """Chat messages built item by item. A built history can be kept (e.g. a conversation's,
    cached with its version) and extended for each new turn through :meth:`copy`, so a long
    conversation is not converted again on every turn."""

    reader: SummaryReader = _no_reader
    messages: list[ChatMessage] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    known_calls: set[str] = field(default_factory=set)
    files: dict[str, Attachment] = field(default_factory=dict)  # what file ids in items name

    def extend(self, items: Iterable[StoredItem], *, param: str | None = None) -> None:
        """Add ``items``; with ``param`` (e.g. ``"input"``) errors name ``param[i]``."""
        for index, item in enumerate(items):
            _add(self, item, param=None if param is None else f"{param}[{index}]")

    def add(self, item: StoredItem, *, param: str | None) -> None:
        _add(self, item, param=param)

    def copy(self) -> ChatHistory:
        return ChatHistory(
            reader=self.reader,
            messages=list(self.messages),
            reasoning=list(self.reasoning),
            text=list(self.text),
            calls=list(self.calls),
            known_calls=set(self.known_calls),
            files=dict(self.files),
        )

    def render(self, head: Head) -> list[ChatMessage]:
        """The messages for the backend: the ``head`` first, then the history (without
        changing it)."""
        return [*head.messages(), *self.messages, *self._pending()]

    def flush_assistant(self) -> None:
        self.messages.extend(self._pending())
        self.text, self.calls, self.reasoning = [], [], []

    def _pending(self) -> list[ChatMessage]:
        if not (self.text or self.calls or self.reasoning):
            return []
        return [
            ChatMessage(
                role="assistant",
                content="".join(self.text) or None,
                tool_calls=tuple(self.calls),
                reasoning="".join(self.reasoning) or None,
            )
        ]


def to_chat_messages(
    instructions: str | None, items: Sequence[StoredItem], *, first_new: int = 0
) -> list[ChatMessage]:
    """Chat messages for ``instructions`` followed by ``items``.

    ``first_new`` is the index of the first item of the request's own input; errors about later
    items name their position in ``input``.
    """
    history = ChatHistory()
    history.extend(items[:first_new])
    history.extend(items[first_new:], param="input")
    return history.render(Head(instructions))


def visible(items: Sequence[StoredItem], reader: SummaryReader, *, first_new: int) -> list[int]:
    """The indexes of ``items`` the model sees, in the order it sees them.

    The latest compaction item replaces every item up to the one its summary runs through, and
    stands where that item stood. A summary that does not name an item still present (the
    client dropped it, or ``/responses/compact`` made it) replaces the items before it other
    than input messages (user, system, developer), which stay. Items after stay.
    """
    last = next((i for i in range(len(items) - 1, -1, -1) if items[i].type == "compaction"), None)
    if last is None:
        return list(range(len(items)))
    compaction = items[last]
    assert isinstance(compaction, Compaction)
    summary = reader(compaction, param=f"input[{last - first_new}]" if last >= first_new else None)
    cut = next((i for i in range(last) if items[i].id == summary.through), None)
    after = [i for i in range(last + 1, len(items))]
    if cut is not None:
        return [last, *(i for i in range(cut + 1, last)), *after]
    kept = [i for i in range(last) if _is_input_message(items[i])]
    return [*kept, last, *after]


def _is_input_message(item: StoredItem) -> bool:
    return isinstance(item, Message) and item.role != "assistant"


def _add(builder: ChatHistory, item: StoredItem, *, param: str | None) -> None:
    """``item`` told to the chat: a server tool's item as its tool defines it
    (:data:`~agentloom.tools.server_tools.TOOL_ITEMS`), the loop's own kinds by :data:`_ADDERS`."""
    if (tool := TOOL_ITEMS.get(item.type)) is not None:
        _add_replayed(builder, tool.replayed(item))
    else:
        _ADDERS[item.type](builder, item, param=param)


def _add_compaction(builder: ChatHistory, item: Compaction, *, param: str | None) -> None:
    summary = builder.reader(item, param=param)
    builder.flush_assistant()
    builder.messages.append(ChatMessage(role="system", content=SUMMARY_HEADING + summary.text))


def _add_reasoning(builder: ChatHistory, item: Reasoning, *, param: str | None) -> None:
    if builder.text or builder.calls:
        builder.flush_assistant()
    builder.reasoning.append(item.text())


def _add_call(builder: ChatHistory, item: _ClientCall, *, param: str | None) -> None:
    call = chat_call(item)
    builder.calls.append(call)
    builder.known_calls.add(call.id)


def _add_message(builder: ChatHistory, item: Message, *, param: str | None) -> None:
    if item.role == "assistant":
        if builder.calls:
            builder.flush_assistant()
        builder.text.append(_assistant_text(item))
    else:
        builder.flush_assistant()
        builder.messages.append(_from_message(item, param=param, files=builder.files))


def _add_mcp(builder: ChatHistory, item: mcp_history.McpItem, *, param: str | None) -> None:
    if isinstance(item, McpApprovalRequest):
        builder.known_calls.add(item.id)
    unknown = isinstance(item, McpApprovalResponse) and (
        item.approval_request_id not in builder.known_calls
    )
    if unknown and param is not None:
        assert isinstance(item, McpApprovalResponse)
        raise InvalidRequestError(
            f"No mcp_approval_request found with id '{item.approval_request_id}'.",
            param=f"{param}.approval_request_id",
        )
    rendered = mcp_history.render(item)
    if rendered.call is not None:
        builder.calls.append(rendered.call)
    if rendered.message is not None:
        builder.flush_assistant()
        builder.messages.append(rendered.message)


def _add_replayed(builder: ChatHistory, replayed: Replayed) -> None:
    """A server tool's item: the assistant's call, then the tool's answer."""
    builder.calls.append(replayed.call)
    builder.flush_assistant()
    answer = ChatMessage(role="tool", content=replayed.output, tool_call_id=replayed.call.id)
    builder.messages.append(answer)


def _add_tool_output(builder: ChatHistory, item: _ClientOutput, *, param: str | None) -> None:
    call_id, text = _output_of(item)
    if call_id not in builder.known_calls:
        if param is not None:
            what = item.type.removesuffix("_output").replace("_", " ")
            raise InvalidRequestError(
                f"No tool call found for {what} output with call_id {call_id}.",
                param=param,
            )
        # An accepted item whose call is not in this history (a chain started from a response
        # that ran on a conversation): told as text, since backends refuse orphan tool messages.
        builder.flush_assistant()
        told = f"(Output of the earlier tool call {call_id}:)\n{text}"
        builder.messages.append(ChatMessage(role="user", content=told))
        return
    builder.flush_assistant()
    builder.messages.append(ChatMessage(role="tool", content=text, tool_call_id=call_id))


def _output_of(item: _ClientOutput) -> tuple[str, str]:
    """The call an output answers, and what the model is told."""
    if isinstance(item, ToolSearchOutput):
        return item.call_id or "", found_text(item)
    return item.call_id, item.output_text()


class _Adder(Protocol):
    def __call__(self, builder: ChatHistory, item: Any, *, param: str | None) -> None: ...


_ADDERS: dict[str, _Adder] = {
    "message": _add_message,
    "reasoning": _add_reasoning,
    "compaction": _add_compaction,
    **dict.fromkeys(_CALL_TYPES, _add_call),
    **dict.fromkeys(_OUTPUT_TYPES, _add_tool_output),
    **dict.fromkeys(mcp_history.MCP_TYPES, _add_mcp),
}
"""How each kind the loop itself knows is told to the chat, by ``type``."""


def _assistant_text(message: Message) -> str:
    return "".join(
        p.text if isinstance(p, OutputText | InputText) else p.refusal
        for p in message.content
        if isinstance(p, OutputText | InputText | Refusal)
    )


def _from_message(
    message: Message, *, param: str | None, files: Mapping[str, Attachment]
) -> ChatMessage:
    if message.role in ("system", "developer"):
        return ChatMessage(role="system", content=message.text())
    parts = tuple(_parts(message.content, param=param, files=files))
    if all(isinstance(p, TextPart) for p in parts):
        return ChatMessage(role="user", content="".join(p.text for p in parts))  # type: ignore[union-attr]
    return ChatMessage(role="user", content=parts)


def _parts(
    content: Iterable[object], *, param: str | None, files: Mapping[str, Attachment]
) -> Iterable[ContentPart]:
    for index, part in enumerate(content):
        where = f"{param}.content[{index}]" if param else None
        if isinstance(part, InputText | OutputText):
            yield TextPart(part.text)
        elif isinstance(part, InputImage):
            yield _image(part, where, files)
        elif isinstance(part, InputFile):
            yield _file(part, where, files, first=index == 0)


def _image(part: InputImage, param: str | None, files: Mapping[str, Attachment]) -> ContentPart:
    detail = "auto" if part.detail == "original" else part.detail
    if part.image_url is not None:
        return ImagePart(url=part.image_url, detail=detail)
    if part.file_id is None:
        raise InvalidRequestError(
            "input_image needs image_url (an http(s) URL or a data URL) or file_id.", param=param
        )
    attachment = files.get(part.file_id)
    if isinstance(attachment, FileImage):
        return ImagePart(url=attachment.url, detail=detail)
    return _unavailable(part.file_id, None, param)


def _file(
    part: InputFile, param: str | None, files: Mapping[str, Attachment], *, first: bool
) -> ContentPart:
    if part.file_data is not None or part.file_url is not None:
        return FilePart(filename=part.filename, data=part.file_data, url=part.file_url)
    if part.file_id is None:
        raise InvalidRequestError(
            "input_file needs one of file_id, file_data or file_url.", param=param
        )
    attachment = files.get(part.file_id)
    if isinstance(attachment, FileText):
        return TextPart(("" if first else "\n") + attachment.shown(part.filename))
    if isinstance(attachment, FileImage):
        return ImagePart(url=attachment.url)
    return _unavailable(part.file_id, part.filename, param)


def _unavailable(file_id: str, label: str | None, param: str | None) -> TextPart:
    """A file the item names that was not resolved: an error for new input (the resolution
    step reports it first; this is the fallback), a note for an item accepted earlier."""
    if param is not None:
        raise NotFoundError(f"No such File object: {file_id}", param=f"{param}.file_id")
    return TextPart(f"[file: {label or file_id}: no longer available]\n")
