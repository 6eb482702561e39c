"""Streaming events, one model per ``type``, in the order and shape of OpenAI's SDK types."""

from __future__ import annotations

from typing import Literal, TypeAlias

from agentloom.api.content import (
    Annotation,
    Logprob,
    OutputText,
    ReasoningText,
    Refusal,
    SummaryText,
)
from agentloom.api.items import OutputItem
from agentloom.api.response import Response
from agentloom.api.wire import Nullable, WireModel


class _Event(WireModel):
    sequence_number: int


class ResponseCreated(_Event):
    type: Literal["response.created"] = "response.created"
    response: Response


class ResponseInProgress(_Event):
    type: Literal["response.in_progress"] = "response.in_progress"
    response: Response


class ResponseCompleted(_Event):
    type: Literal["response.completed"] = "response.completed"
    response: Response


class ResponseIncomplete(_Event):
    type: Literal["response.incomplete"] = "response.incomplete"
    response: Response


class ResponseFailed(_Event):
    type: Literal["response.failed"] = "response.failed"
    response: Response


class OutputItemAdded(_Event):
    type: Literal["response.output_item.added"] = "response.output_item.added"
    output_index: int
    item: OutputItem


class OutputItemDone(_Event):
    type: Literal["response.output_item.done"] = "response.output_item.done"
    output_index: int
    item: OutputItem


class _PartEvent(_Event):
    item_id: str
    output_index: int
    content_index: int


class ContentPartAdded(_PartEvent):
    type: Literal["response.content_part.added"] = "response.content_part.added"
    part: OutputText | Refusal | ReasoningText


class ContentPartDone(_PartEvent):
    type: Literal["response.content_part.done"] = "response.content_part.done"
    part: OutputText | Refusal | ReasoningText


class OutputTextDelta(_PartEvent):
    type: Literal["response.output_text.delta"] = "response.output_text.delta"
    delta: str
    logprobs: list[Logprob]


class OutputTextDone(_PartEvent):
    type: Literal["response.output_text.done"] = "response.output_text.done"
    text: str
    logprobs: list[Logprob]


class OutputTextAnnotationAdded(_PartEvent):
    type: Literal["response.output_text.annotation.added"] = "response.output_text.annotation.added"
    annotation_index: int
    annotation: Annotation


class RefusalDelta(_PartEvent):
    type: Literal["response.refusal.delta"] = "response.refusal.delta"
    delta: str


class RefusalDone(_PartEvent):
    type: Literal["response.refusal.done"] = "response.refusal.done"
    refusal: str


class ReasoningTextDelta(_PartEvent):
    type: Literal["response.reasoning_text.delta"] = "response.reasoning_text.delta"
    delta: str


class ReasoningTextDone(_PartEvent):
    type: Literal["response.reasoning_text.done"] = "response.reasoning_text.done"
    text: str


class _SummaryEvent(_Event):
    item_id: str
    output_index: int
    summary_index: int


class ReasoningSummaryPartAdded(_SummaryEvent):
    type: Literal["response.reasoning_summary_part.added"] = "response.reasoning_summary_part.added"
    part: SummaryText


class ReasoningSummaryTextDelta(_SummaryEvent):
    type: Literal["response.reasoning_summary_text.delta"] = "response.reasoning_summary_text.delta"
    delta: str


class ReasoningSummaryTextDone(_SummaryEvent):
    type: Literal["response.reasoning_summary_text.done"] = "response.reasoning_summary_text.done"
    text: str


class ReasoningSummaryPartDone(_SummaryEvent):
    type: Literal["response.reasoning_summary_part.done"] = "response.reasoning_summary_part.done"
    part: SummaryText


class FunctionCallArgumentsDelta(_Event):
    type: Literal["response.function_call_arguments.delta"] = (
        "response.function_call_arguments.delta"
    )
    item_id: str
    output_index: int
    delta: str


class FunctionCallArgumentsDone(_Event):
    type: Literal["response.function_call_arguments.done"] = "response.function_call_arguments.done"
    item_id: str
    output_index: int
    name: str
    arguments: str


class CustomToolCallInputDelta(_Event):
    type: Literal["response.custom_tool_call_input.delta"] = "response.custom_tool_call_input.delta"
    item_id: str
    output_index: int
    delta: str


class CustomToolCallInputDone(_Event):
    type: Literal["response.custom_tool_call_input.done"] = "response.custom_tool_call_input.done"
    item_id: str
    output_index: int
    input: str


class ShellCallCommandAdded(_Event):
    """A command of a ``shell_call`` begins (its text follows in deltas)."""

    type: Literal["response.shell_call_command.added"] = "response.shell_call_command.added"
    output_index: int
    command_index: int
    command: str


class ShellCallCommandDelta(_Event):
    type: Literal["response.shell_call_command.delta"] = "response.shell_call_command.delta"
    output_index: int
    command_index: int
    delta: str


class ShellCallCommandDone(_Event):
    type: Literal["response.shell_call_command.done"] = "response.shell_call_command.done"
    output_index: int
    command_index: int
    command: str


class _ItemEvent(_Event):
    item_id: str
    output_index: int


class FileSearchCallInProgress(_ItemEvent):
    type: Literal["response.file_search_call.in_progress"] = "response.file_search_call.in_progress"


class FileSearchCallSearching(_ItemEvent):
    type: Literal["response.file_search_call.searching"] = "response.file_search_call.searching"


class FileSearchCallCompleted(_ItemEvent):
    type: Literal["response.file_search_call.completed"] = "response.file_search_call.completed"


class CodeInterpreterCallInProgress(_ItemEvent):
    type: Literal["response.code_interpreter_call.in_progress"] = (
        "response.code_interpreter_call.in_progress"
    )


class CodeInterpreterCallInterpreting(_ItemEvent):
    type: Literal["response.code_interpreter_call.interpreting"] = (
        "response.code_interpreter_call.interpreting"
    )


class CodeInterpreterCallCompleted(_ItemEvent):
    type: Literal["response.code_interpreter_call.completed"] = (
        "response.code_interpreter_call.completed"
    )


class CodeInterpreterCallCodeDelta(_ItemEvent):
    type: Literal["response.code_interpreter_call_code.delta"] = (
        "response.code_interpreter_call_code.delta"
    )
    delta: str


class CodeInterpreterCallCodeDone(_ItemEvent):
    type: Literal["response.code_interpreter_call_code.done"] = (
        "response.code_interpreter_call_code.done"
    )
    code: str


class WebSearchCallInProgress(_ItemEvent):
    type: Literal["response.web_search_call.in_progress"] = "response.web_search_call.in_progress"


class WebSearchCallSearching(_ItemEvent):
    type: Literal["response.web_search_call.searching"] = "response.web_search_call.searching"


class WebSearchCallCompleted(_ItemEvent):
    type: Literal["response.web_search_call.completed"] = "response.web_search_call.completed"


class McpListToolsInProgress(_ItemEvent):
    type: Literal["response.mcp_list_tools.in_progress"] = "response.mcp_list_tools.in_progress"


class McpListToolsCompleted(_ItemEvent):
    type: Literal["response.mcp_list_tools.completed"] = "response.mcp_list_tools.completed"


class McpListToolsFailed(_ItemEvent):
    type: Literal["response.mcp_list_tools.failed"] = "response.mcp_list_tools.failed"


class McpCallArgumentsDelta(_ItemEvent):
    type: Literal["response.mcp_call_arguments.delta"] = "response.mcp_call_arguments.delta"
    delta: str


class McpCallArgumentsDone(_ItemEvent):
    type: Literal["response.mcp_call_arguments.done"] = "response.mcp_call_arguments.done"
    arguments: str


class McpCallInProgress(_ItemEvent):
    type: Literal["response.mcp_call.in_progress"] = "response.mcp_call.in_progress"


class McpCallCompleted(_ItemEvent):
    type: Literal["response.mcp_call.completed"] = "response.mcp_call.completed"


class McpCallFailed(_ItemEvent):
    type: Literal["response.mcp_call.failed"] = "response.mcp_call.failed"


class CompactionCompacting(_Event):
    """A compaction pass started: its summary is being written (the item follows when done)."""

    type: Literal["response.compaction.compacting"] = "response.compaction.compacting"
    item_id: str
    output_index: int


class StreamedError(WireModel):
    """What an ``error`` event carries (the specification's ``ErrorPayload``)."""

    type: str
    code: Nullable[str]
    message: str
    param: Nullable[str]


class ErrorEvent(_Event):
    """A fault after the stream began. ``error`` is the specification's shape (and what the
    ``openai`` package raises as an ``APIError``); ``code``, ``message`` and ``param`` repeat it
    at the top, as the package's ``ResponseErrorEvent`` reads it."""

    type: Literal["error"] = "error"
    code: Nullable[str]
    message: str
    param: Nullable[str]
    error: StreamedError


TerminalEvent: TypeAlias = ResponseCompleted | ResponseIncomplete | ResponseFailed
StreamEvent: TypeAlias = (
    ResponseCreated
    | ResponseInProgress
    | TerminalEvent
    | OutputItemAdded
    | OutputItemDone
    | ContentPartAdded
    | ContentPartDone
    | OutputTextDelta
    | OutputTextDone
    | OutputTextAnnotationAdded
    | RefusalDelta
    | RefusalDone
    | ReasoningTextDelta
    | ReasoningTextDone
    | ReasoningSummaryPartAdded
    | ReasoningSummaryTextDelta
    | ReasoningSummaryTextDone
    | ReasoningSummaryPartDone
    | FunctionCallArgumentsDelta
    | FunctionCallArgumentsDone
    | CustomToolCallInputDelta
    | CustomToolCallInputDone
    | ShellCallCommandAdded
    | ShellCallCommandDelta
    | ShellCallCommandDone
    | CompactionCompacting
    | FileSearchCallInProgress
    | FileSearchCallSearching
    | FileSearchCallCompleted
    | CodeInterpreterCallInProgress
    | CodeInterpreterCallInterpreting
    | CodeInterpreterCallCompleted
    | CodeInterpreterCallCodeDelta
    | CodeInterpreterCallCodeDone
    | WebSearchCallInProgress
    | WebSearchCallSearching
    | WebSearchCallCompleted
    | McpListToolsInProgress
    | McpListToolsCompleted
    | McpListToolsFailed
    | McpCallArgumentsDelta
    | McpCallArgumentsDone
    | McpCallInProgress
    | McpCallCompleted
    | McpCallFailed
    | ErrorEvent
)
