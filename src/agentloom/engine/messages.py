"""Turn Responses items into the chat messages a backend understands.

Consecutive function calls (and the reasoning before them) become one assistant message carrying
``tool_calls``; function call outputs become tool messages; system and developer messages become
system messages (backends differ in their support of the developer role).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentloom.api.content import InputFile, InputImage, InputText, OutputText, Refusal
from agentloom.api.items import FunctionCall, FunctionCallOutput, Message, Reasoning, StoredItem
from agentloom.errors import InvalidRequestError
from agentloom.inference.base import (
    ChatMessage,
    ContentPart,
    FilePart,
    ImagePart,
    TextPart,
    ToolCall,
)


@dataclass
class _Builder:
    messages: list[ChatMessage] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    known_calls: set[str] = field(default_factory=set)

    def flush_assistant(self) -> None:
        if not (self.text or self.calls or self.reasoning):
            return
        self.messages.append(
            ChatMessage(
                role="assistant",
                content="".join(self.text) or None,
                tool_calls=tuple(self.calls),
                reasoning="".join(self.reasoning) or None,
            )
        )
        self.text, self.calls, self.reasoning = [], [], []


def to_chat_messages(
    instructions: str | None, items: Sequence[StoredItem], *, first_new: int = 0
) -> list[ChatMessage]:
    """Chat messages for ``instructions`` followed by ``items``.

    ``first_new`` is the index of the first item of the request's own input; errors about later
    items name their position in ``input``.
    """
    builder = _Builder()
    if instructions:
        builder.messages.append(ChatMessage(role="system", content=instructions))
    for index, item in enumerate(items):
        _add(builder, item, param=f"input[{index - first_new}]" if index >= first_new else None)
    builder.flush_assistant()
    return builder.messages


def _add(builder: _Builder, item: StoredItem, *, param: str | None) -> None:
    if isinstance(item, Reasoning):
        if builder.text or builder.calls:
            builder.flush_assistant()
        builder.reasoning.append(item.text())
    elif isinstance(item, FunctionCall):
        builder.calls.append(ToolCall(id=item.call_id, name=item.name, arguments=item.arguments))
        builder.known_calls.add(item.call_id)
    elif isinstance(item, FunctionCallOutput):
        _add_tool_output(builder, item, param=param)
    elif item.role == "assistant":
        if builder.calls:
            builder.flush_assistant()
        builder.text.append(_assistant_text(item))
    else:
        builder.flush_assistant()
        builder.messages.append(_from_message(item, param=param))


def _add_tool_output(builder: _Builder, item: FunctionCallOutput, *, param: str | None) -> None:
    if item.call_id not in builder.known_calls:
        raise InvalidRequestError(
            f"No tool call found for function call output with call_id {item.call_id}.",
            param=param or "input",
        )
    builder.flush_assistant()
    builder.messages.append(
        ChatMessage(role="tool", content=item.output_text(), tool_call_id=item.call_id)
    )


def _assistant_text(message: Message) -> str:
    return "".join(
        p.text if isinstance(p, OutputText | InputText) else p.refusal
        for p in message.content
        if isinstance(p, OutputText | InputText | Refusal)
    )


def _from_message(message: Message, *, param: str | None) -> ChatMessage:
    if message.role in ("system", "developer"):
        return ChatMessage(role="system", content=message.text())
    parts = tuple(_parts(message.content, param=param))
    if all(isinstance(p, TextPart) for p in parts):
        return ChatMessage(role="user", content="".join(p.text for p in parts))  # type: ignore[union-attr]
    return ChatMessage(role="user", content=parts)


def _parts(content: Iterable[object], *, param: str | None) -> Iterable[ContentPart]:
    for index, part in enumerate(content):
        where = f"{param}.content[{index}]" if param else None
        if isinstance(part, InputText | OutputText):
            yield TextPart(part.text)
        elif isinstance(part, InputImage):
            yield _image(part, where)
        elif isinstance(part, InputFile):
            yield _file(part, where)


def _image(part: InputImage, param: str | None) -> ImagePart:
    if part.image_url is None:
        raise InvalidRequestError(
            "input_image by file_id needs the Files API, which this server does not have yet; "
            "send image_url (an http(s) URL or a data URL).",
            param=param,
        )
    detail = "auto" if part.detail == "original" else part.detail
    return ImagePart(url=part.image_url, detail=detail)


def _file(part: InputFile, param: str | None) -> FilePart:
    if part.file_data is None and part.file_url is None:
        raise InvalidRequestError(
            "input_file needs file_data or file_url (file_id needs the Files API, which this "
            "server does not have yet).",
            param=param,
        )
    return FilePart(filename=part.filename, data=part.file_data, url=part.file_url)
