"""Conversation items: what a request may send as ``input`` and what a response outputs.

One set of models serves both directions: an item parsed from a request is normalised (string
content becomes parts, ids and statuses are filled in by the engine) and is then stored and echoed
in exactly the shape OpenAI's SDK types expect.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag, TypeAdapter, model_validator

from agentloom.api.content import (
    InputContent,
    InputText,
    MessageContent,
    OutputContent,
    OutputText,
    ReasoningText,
    SummaryText,
)
from agentloom.api.integers import Int64
from agentloom.api.limits import at_most
from agentloom.api.shell_items import (
    ApplyPatchCall,
    ApplyPatchCallOutput,
    LocalShellCall,
    LocalShellCallOutput,
    ShellCall,
    ShellCallOutput,
)
from agentloom.api.tools import Tool
from agentloom.api.wire import Nullable, WireModel

ItemStatus = Literal["in_progress", "completed", "incomplete"]
MessageRole = Literal["user", "system", "developer", "assistant"]


class Message(WireModel):
    """A message of any role. Easy messages (no ``type``, string content) are accepted too."""

    type: Literal["message"] = "message"
    ID_PREFIX: ClassVar[str] = "msg"  # of the ids the server gives it
    id: str | None = None
    role: MessageRole
    content: Annotated[list[MessageContent], at_most("max_content_parts")]
    status: ItemStatus | None = None

    @model_validator(mode="before")
    @classmethod
    def _string_content_to_parts(cls, data: object) -> object:
        if isinstance(data, dict) and isinstance(data.get("content"), str):
            part = "output_text" if data.get("role") == "assistant" else "input_text"
            data = {**data, "content": [{"type": part, "text": data["content"]}]}
        return data

    def text(self) -> str:
        """The concatenated text of the message (input and output text parts)."""
        return "".join(p.text for p in self.content if isinstance(p, InputText | OutputText))


class OutputMessage(WireModel):
    """The assistant message a response outputs."""

    type: Literal["message"] = "message"
    id: str
    role: Literal["assistant"] = "assistant"
    status: ItemStatus
    content: list[OutputContent] = Field(default_factory=list)


def _joined_text(output: str | list[InputContent]) -> str:
    """A tool output as text: the string, or its text parts joined."""
    if isinstance(output, str):
        return output
    return "".join(p.text for p in output if isinstance(p, InputText))


class FunctionCall(WireModel):
    """A call of a function the client runs; ``namespace``: the group of a function offered in
    a ``namespace`` tool."""

    type: Literal["function_call"] = "function_call"
    ID_PREFIX: ClassVar[str] = "fc"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    name: str
    arguments: str
    namespace: str | None = None
    status: ItemStatus | None = None


class FunctionCallOutput(WireModel):
    type: Literal["function_call_output"] = "function_call_output"
    ID_PREFIX: ClassVar[str] = "fco"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    output: str | list[InputContent]
    status: ItemStatus | None = None

    def output_text(self) -> str:
        return _joined_text(self.output)


class CustomToolCall(WireModel):
    """A call of a freeform (``custom``) tool the client runs: its ``input`` is raw text."""

    type: Literal["custom_tool_call"] = "custom_tool_call"
    ID_PREFIX: ClassVar[str] = "ctc"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    name: str
    input: str
    namespace: str | None = None
    status: ItemStatus | None = None


class CustomToolCallOutput(WireModel):
    type: Literal["custom_tool_call_output"] = "custom_tool_call_output"
    ID_PREFIX: ClassVar[str] = "ctco"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    output: str | list[InputContent]
    status: ItemStatus | None = None

    def output_text(self) -> str:
        return _joined_text(self.output)


class ToolSearchCall(WireModel):
    """The model searching tools the client runs (``tool_search`` with client execution)."""

    type: Literal["tool_search_call"] = "tool_search_call"
    ID_PREFIX: ClassVar[str] = "tsc"  # of the ids the server gives it
    id: str | None = None
    call_id: Nullable[str] = None
    arguments: object = Field(default_factory=dict)
    execution: Literal["server", "client"] = "client"
    status: ItemStatus | None = None


class ToolSearchOutput(WireModel):
    """What a tool search found: tools the model may call from then on."""

    type: Literal["tool_search_output"] = "tool_search_output"
    ID_PREFIX: ClassVar[str] = "tso"  # of the ids the server gives it
    id: str | None = None
    call_id: Nullable[str] = None
    execution: Literal["server", "client"] = "client"
    tools: list[Tool] = Field(default_factory=list)
    status: ItemStatus | None = None


class Reasoning(WireModel):
    type: Literal["reasoning"] = "reasoning"
    ID_PREFIX: ClassVar[str] = "rs"  # of the ids the server gives it
    id: str | None = None
    summary: list[SummaryText] = Field(default_factory=list)
    content: list[ReasoningText] | None = None
    encrypted_content: str | None = None
    status: ItemStatus | None = None

    def text(self) -> str:
        parts = self.content if self.content else self.summary
        return "".join(p.text for p in parts)


class Compaction(WireModel):
    """A compaction item: a summary of earlier items, sealed (``encrypted_content``), that
    later turns read in place of the items it replaced."""

    type: Literal["compaction"] = "compaction"
    ID_PREFIX: ClassVar[str] = "cmp"  # of the ids the server gives it
    id: str | None = None
    encrypted_content: str = Field(min_length=1)
    created_by: str | None = None


FileSearchStatus = Literal["in_progress", "searching", "completed", "incomplete", "failed"]
AttributeValue: TypeAlias = str | float | bool


class FileSearchResult(WireModel):
    """One passage a file search found."""

    file_id: str | None = None
    filename: str | None = None
    score: float | None = None
    text: str | None = None
    attributes: Nullable[dict[str, AttributeValue]] = None


class FileSearchCall(WireModel):
    """A ``file_search`` call the server ran. ``results`` are kept only when the request asked
    for them (``include: ["file_search_call.results"]``)."""

    type: Literal["file_search_call"] = "file_search_call"
    ID_PREFIX: ClassVar[str] = "fs"  # of the ids the server gives it
    id: str
    queries: list[str] = Field(default_factory=list)
    status: FileSearchStatus
    results: Nullable[list[FileSearchResult]] = None


class CodeInterpreterLogs(WireModel):
    type: Literal["logs"] = "logs"
    logs: str


class CodeInterpreterImage(WireModel):
    type: Literal["image"] = "image"
    url: str


CodeInterpreterOutput: TypeAlias = Annotated[
    CodeInterpreterLogs | CodeInterpreterImage, Field(discriminator="type")
]


class CodeInterpreterCall(WireModel):
    """A ``code_interpreter`` call the server ran in a container. ``outputs`` are kept only
    when the request asked for them (``include: ["code_interpreter_call.outputs"]``)."""

    type: Literal["code_interpreter_call"] = "code_interpreter_call"
    ID_PREFIX: ClassVar[str] = "ci"  # of the ids the server gives it
    id: str
    code: Nullable[str] = None
    container_id: str
    status: Literal["in_progress", "interpreting", "completed", "incomplete", "failed"]
    outputs: Nullable[list[CodeInterpreterOutput]] = None


class WebSearchSource(WireModel):
    type: Literal["url"] = "url"
    url: str


class WebSearchAction(WireModel):
    """A search. ``sources`` are kept only when the request asked for them (``include:
    ["web_search_call.action.sources"]``)."""

    type: Literal["search"] = "search"
    query: str | None = None
    queries: list[str] | None = None
    sources: list[WebSearchSource] | None = None


class OpenPageAction(WireModel):
    type: Literal["open_page"] = "open_page"
    url: str | None = None


class FindInPageAction(WireModel):
    type: Literal["find_in_page"] = "find_in_page"
    url: str
    pattern: str


WebAction: TypeAlias = Annotated[
    WebSearchAction | OpenPageAction | FindInPageAction, Field(discriminator="type")
]


class WebSearchCall(WireModel):
    """A ``web_search`` call the server ran (or a client sends back: Codex omits the id)."""

    type: Literal["web_search_call"] = "web_search_call"
    ID_PREFIX: ClassVar[str] = "ws"  # of the ids the server gives it
    id: str | None = None
    status: Literal["in_progress", "searching", "completed", "failed", "incomplete"] | None = None
    action: WebAction = Field(default_factory=WebSearchAction)


class McpListedTool(WireModel):
    name: str
    input_schema: dict[str, object]
    description: Nullable[str] = None
    annotations: Nullable[dict[str, object]] = None


class McpListTools(WireModel):
    """The tools an MCP server listed (``tools/list``); later turns reuse it."""

    type: Literal["mcp_list_tools"] = "mcp_list_tools"
    ID_PREFIX: ClassVar[str] = "mcpl"  # of the ids the server gives it
    id: str
    server_label: str
    tools: list[McpListedTool] = Field(default_factory=list)
    error: Nullable[str] = None


class McpCallError(WireModel):
    """Why an MCP call failed: ``mcp_protocol_error`` / ``http_error`` (``code``, ``message``)
    or ``mcp_tool_execution_error`` (the tool's own ``content``)."""

    type: Literal["mcp_protocol_error", "mcp_tool_execution_error", "http_error"]
    code: Int64 | None = None
    message: str | None = None
    content: list[dict[str, object]] | None = None

    @classmethod
    def execution(cls, text: str) -> McpCallError:
        """A tool execution error whose content is ``text``."""
        return cls(type="mcp_tool_execution_error", content=[{"type": "text", "text": text}])

    def redacted(self, text: str) -> McpCallError:
        """The same kind of error, saying ``text`` instead of what it said."""
        if self.type == "mcp_tool_execution_error":
            return McpCallError.execution(text)
        return self.model_copy(update={"message": text})

    @model_validator(mode="after")
    def _shape_of_its_type(self) -> McpCallError:
        """Content for a tool's own error, a code and a message for the others. An execution
        error stored with a message (before this was checked) reads as that message's content."""
        if self.type == "mcp_tool_execution_error":
            if self.content is None:
                self.content = [{"type": "text", "text": self.message or ""}]
                self.message = None
        elif self.code is None or self.message is None:
            raise ValueError(f"an {self.type} has a code and a message")
        return self


class McpCall(WireModel):
    type: Literal["mcp_call"] = "mcp_call"
    ID_PREFIX: ClassVar[str] = "mcp"  # of the ids the server gives it
    id: str
    server_label: str
    name: str
    arguments: str
    output: Nullable[str] = None
    error: Nullable[McpCallError] = None
    status: Literal["in_progress", "completed", "incomplete", "calling", "failed"] | None = None
    approval_request_id: Nullable[str] = None


class McpApprovalRequest(WireModel):
    """A call of an MCP tool waiting for the client's approval."""

    type: Literal["mcp_approval_request"] = "mcp_approval_request"
    ID_PREFIX: ClassVar[str] = "mcpr"  # of the ids the server gives it
    id: str
    server_label: str
    name: str
    arguments: str


class McpApprovalResponse(WireModel):
    type: Literal["mcp_approval_response"] = "mcp_approval_response"
    ID_PREFIX: ClassVar[str] = "mcpa"  # of the ids the server gives it
    id: str | None = None
    approval_request_id: str
    approve: bool
    reason: str | None = None


class ItemReference(WireModel):
    type: Literal["item_reference"] = "item_reference"
    id: str


def item_type_tag(value: object) -> str:
    """Union tag of an item: its ``type`` (``message`` when absent), prefixed with ``~``.

    The prefix marks tags in validation-error locations so they never appear in ``param``.
    """
    kind = value.get("type", "message") if isinstance(value, dict) else getattr(value, "type", None)
    return f"~{kind}" if isinstance(kind, str) else "~unknown"


_Stored: TypeAlias = (
    Annotated[Message, Tag("~message")]
    | Annotated[FunctionCall, Tag("~function_call")]
    | Annotated[FunctionCallOutput, Tag("~function_call_output")]
    | Annotated[CustomToolCall, Tag("~custom_tool_call")]
    | Annotated[CustomToolCallOutput, Tag("~custom_tool_call_output")]
    | Annotated[ToolSearchCall, Tag("~tool_search_call")]
    | Annotated[ToolSearchOutput, Tag("~tool_search_output")]
    | Annotated[ShellCall, Tag("~shell_call")]
    | Annotated[ShellCallOutput, Tag("~shell_call_output")]
    | Annotated[LocalShellCall, Tag("~local_shell_call")]
    | Annotated[LocalShellCallOutput, Tag("~local_shell_call_output")]
    | Annotated[ApplyPatchCall, Tag("~apply_patch_call")]
    | Annotated[ApplyPatchCallOutput, Tag("~apply_patch_call_output")]
    | Annotated[Reasoning, Tag("~reasoning")]
    | Annotated[Compaction, Tag("~compaction")]
    | Annotated[FileSearchCall, Tag("~file_search_call")]
    | Annotated[CodeInterpreterCall, Tag("~code_interpreter_call")]
    | Annotated[WebSearchCall, Tag("~web_search_call")]
    | Annotated[McpListTools, Tag("~mcp_list_tools")]
    | Annotated[McpCall, Tag("~mcp_call")]
    | Annotated[McpApprovalRequest, Tag("~mcp_approval_request")]
    | Annotated[McpApprovalResponse, Tag("~mcp_approval_response")]
)
"""Every item kind, each tagged with its ``type``: the one list of them."""

InputItem: TypeAlias = Annotated[
    _Stored | Annotated[ItemReference, Tag("~item_reference")],
    Discriminator(
        item_type_tag,
        custom_error_type="invalid_item_type",
        custom_error_message="Unsupported input item type",
    ),
]
"""An item a client may send in ``input``: any kind, or a reference to a stored item."""

StoredItem: TypeAlias = Annotated[_Stored, Discriminator(item_type_tag)]
"""An item as stored: every input and output item of a response, with its id."""

OutputItem: TypeAlias = Annotated[
    Annotated[OutputMessage, Tag("~message")]
    | Annotated[FunctionCall, Tag("~function_call")]
    | Annotated[CustomToolCall, Tag("~custom_tool_call")]
    | Annotated[ToolSearchCall, Tag("~tool_search_call")]
    | Annotated[ShellCall, Tag("~shell_call")]
    | Annotated[LocalShellCall, Tag("~local_shell_call")]
    | Annotated[ApplyPatchCall, Tag("~apply_patch_call")]
    | Annotated[Reasoning, Tag("~reasoning")]
    | Annotated[Compaction, Tag("~compaction")]
    | Annotated[FileSearchCall, Tag("~file_search_call")]
    | Annotated[CodeInterpreterCall, Tag("~code_interpreter_call")]
    | Annotated[WebSearchCall, Tag("~web_search_call")]
    | Annotated[McpListTools, Tag("~mcp_list_tools")]
    | Annotated[McpCall, Tag("~mcp_call")]
    | Annotated[McpApprovalRequest, Tag("~mcp_approval_request")],
    Discriminator(item_type_tag),
]
"""An item a response outputs."""

STORED_ITEM: TypeAdapter[StoredItem] = TypeAdapter(StoredItem)
STORED_ITEMS: TypeAdapter[list[StoredItem]] = TypeAdapter(list[StoredItem])
