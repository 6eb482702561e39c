"""The Responses path's request: SDK messages, tools and options as ``POST /responses`` params.

System and developer messages become ``instructions``; user messages input messages (text, or
``input_text`` and ``input_image`` parts); an assistant message its reasoning items (replayed
verbatim, stateless mode only), its text as an assistant message and its tool calls as
``function_call`` items; a tool message a ``function_call_output`` with the call's original
``call_id``. Function tools are strict unless they say otherwise (:mod:`.strict_schema`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    ResponseFormatTextJSONSchemaConfigParam,
    ResponseFunctionToolCallParam,
    ResponseIncludable,
    ResponseInputImageParam,
    ResponseInputItemParam,
    ResponseInputMessageContentListParam,
    ResponseInputTextParam,
    ResponseReasoningItemParam,
    ResponseTextConfigParam,
)
from openai.types.responses.response_create_params import (
    ResponseCreateParamsStreaming,
    ToolChoice,
)
from openai.types.responses.response_input_item_param import FunctionCallOutput
from openai.types.shared_params import Reasoning

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference.base import JsonSchemaFormat
from agentloom.inference.base import ToolChoice as SDKToolChoice
from agentloom.json_types import JSONValue
from agentloom.llm.options import CallOptions, body_extras
from agentloom.llm.state import ConversationState, StateMode
from agentloom.llm.strict_schema import sent_strict
from agentloom.llm.types import Content, FunctionTool, Message, ReasoningItem, TextContent

__all__ = [
    "ENCRYPTED_REASONING",
    "ResponsesCall",
    "input_content",
    "input_items",
    "request_extra_body",
    "request_params",
]

ENCRYPTED_REASONING: ResponseIncludable = "reasoning.encrypted_content"


@frozen
class ResponsesCall:
    """One call on the Responses path: what to send, and how the conversation's state is kept.

    ``state`` is used (and advanced) only when ``mode`` is ``"stateful"``.
    """

    model: str
    messages: tuple[Message, ...]
    tools: tuple[FunctionTool, ...]
    options: CallOptions
    state: ConversationState | None
    mode: StateMode
    encrypted_reasoning: bool

    @property
    def stateful(self) -> bool:
        """Whether the server keeps this conversation (``store: true``)."""
        return self.mode == "stateful" and self.state is not None

    @property
    def continuation(self) -> str | None:
        """The ``previous_response_id`` this call continues, if it continues one."""
        if not self.stateful or self.state is None:
            return None
        return self.state.previous_response_id


# --- input items -----------------------------------------------------------------------------


def instructions(messages: Sequence[Message]) -> str | None:
    """System and developer messages, joined (the whole conversation's, on every call)."""
    texts = [m.text for m in messages if m.role in ("system", "developer")]
    return "\n\n".join(filter(None, texts)) or None


def input_items(
    messages: Sequence[Message], *, replay_reasoning: bool
) -> list[ResponseInputItemParam]:
    """The input items for ``messages`` (system and developer messages are instructions)."""
    items: list[ResponseInputItemParam] = []
    for message in messages:
        if message.role == "user":
            items.append(EasyInputMessageParam(role="user", content=input_content(message)))
        elif message.role == "assistant":
            items.extend(_assistant(message, replay_reasoning))
        elif message.role == "tool":
            items.append(_tool_output(message))
    return items


def _assistant(message: Message, replay_reasoning: bool) -> list[ResponseInputItemParam]:
    items: list[ResponseInputItemParam] = []
    if replay_reasoning:
        items.extend(_reasoning(item) for item in message.reasoning_items)
    if message.text:
        items.append(EasyInputMessageParam(role="assistant", content=message.text))
    items.extend(
        ResponseFunctionToolCallParam(
            type="function_call", call_id=call.call_id, name=call.name, arguments=call.arguments
        )
        for call in message.tool_calls
    )
    return items


def _reasoning(item: ReasoningItem) -> ResponseReasoningItemParam:
    """The item exactly as the server returned it; rebuilt only when it was made by hand."""
    if item.item:
        return cast("ResponseReasoningItemParam", dict(item.item))
    param = ResponseReasoningItemParam(
        type="reasoning",
        id=item.id,
        summary=[{"type": "summary_text", "text": text} for text in item.summary],
    )
    if item.encrypted_content is not None:
        param["encrypted_content"] = item.encrypted_content
    return param


def _tool_output(message: Message) -> FunctionCallOutput:
    if message.tool_call_id is None:
        raise InvalidRequestError(
            "a tool message needs the tool_call_id of the call it answers (Message.tool(...))"
        )
    return FunctionCallOutput(
        type="function_call_output", call_id=message.tool_call_id, output=message.text
    )


def input_content(message: Message) -> str | ResponseInputMessageContentListParam:
    """A user message's content: its string, or its parts as ``input_text``/``input_image``."""
    if message.content is None or isinstance(message.content, str):
        return message.content or ""
    return [_part(part) for part in message.content]


def _part(part: Content) -> ResponseInputTextParam | ResponseInputImageParam:
    if isinstance(part, TextContent):
        return ResponseInputTextParam(type="input_text", text=part.text)
    return ResponseInputImageParam(type="input_image", image_url=part.url, detail=part.detail)


# --- the whole request -----------------------------------------------------------------------


def request_params(call: ResponsesCall) -> ResponseCreateParamsStreaming:
    """The streaming request for ``call``: the whole history, unless it continues a stored
    response; then only the messages the server does not hold yet, after its id."""
    previous = call.continuation
    messages = call.messages
    if previous is not None and call.state is not None:
        messages = messages[call.state.sent :]
    params = ResponseCreateParamsStreaming(
        model=call.model,
        input=input_items(messages, replay_reasoning=not call.stateful),
        store=call.stateful,
        stream=True,
    )
    system = instructions(call.messages)
    if system is not None:
        params["instructions"] = system
    if previous is not None:
        params["previous_response_id"] = previous
    if call.encrypted_reasoning and not call.stateful:
        params["include"] = [ENCRYPTED_REASONING]
    if call.tools:
        params["tools"] = [_tool(tool) for tool in call.tools]
        _tool_options(params, call.options)
    _generation_options(params, call.options)
    metadata, _ = body_extras(call.options)
    if metadata is not None:
        params["metadata"] = metadata
    return params


def request_extra_body(call: ResponsesCall) -> dict[str, JSONValue] | None:
    """What the call's ``extra_body`` adds to the request body (its metadata is in
    :func:`request_params`), ``None`` when nothing."""
    _, extra = body_extras(call.options)
    return extra or None


def _tool(tool: FunctionTool) -> FunctionToolParam:
    strict = sent_strict(tool, default=True)  # strict unless the tool says otherwise
    parameters = tool.parameters if strict is None else strict
    param = FunctionToolParam(
        type="function", name=tool.name, parameters=dict(parameters), strict=strict is not None
    )
    if tool.description:
        param["description"] = tool.description
    return param


def _tool_options(params: ResponseCreateParamsStreaming, options: CallOptions) -> None:
    if options.tool_choice is not None:
        params["tool_choice"] = _tool_choice(options.tool_choice)
    if options.parallel_tool_calls is not None:
        params["parallel_tool_calls"] = options.parallel_tool_calls


def _tool_choice(choice: SDKToolChoice) -> ToolChoice:
    if isinstance(choice, str):
        return choice
    return {"type": "function", "name": choice.name}


def _generation_options(params: ResponseCreateParamsStreaming, options: CallOptions) -> None:
    if options.temperature is not None:
        params["temperature"] = options.temperature
    if options.top_p is not None:
        params["top_p"] = options.top_p
    if options.max_output_tokens is not None:
        params["max_output_tokens"] = options.max_output_tokens
    reasoning: dict[str, str] = {}
    if options.reasoning_effort is not None:
        reasoning["effort"] = options.reasoning_effort
    if options.reasoning_summary is not None:
        reasoning["summary"] = options.reasoning_summary
    if reasoning:
        params["reasoning"] = cast("Reasoning", reasoning)
    if options.response_format != "text":
        params["text"] = _text_format(options.response_format)


def _text_format(fmt: JsonSchemaFormat | str) -> ResponseTextConfigParam:
    if not isinstance(fmt, JsonSchemaFormat):
        return {"format": {"type": "json_object"}}
    schema = ResponseFormatTextJSONSchemaConfigParam(
        type="json_schema", name=fmt.name, schema=dict(fmt.schema), strict=fmt.strict
    )
    if fmt.description is not None:
        schema["description"] = fmt.description
    return {"format": schema}
