"""The Chat Completions JSON body of a :class:`ChatRequest`: plain dicts, unset fields left out
(the ``openai`` SDK's typed request transform cost milliseconds per request)."""

from __future__ import annotations

from typing import Final

from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    ContentPart,
    FunctionSpec,
    ImagePart,
    JsonSchemaFormat,
    ResponseFormat,
    TextPart,
    ToolCall,
    ToolChoice,
)

_PLAIN_FIELDS: Final = (
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "max_tokens",
    "reasoning_effort",
    "user",
    "prompt_cache_key",
    "safety_identifier",
    "service_tier",
)


def chat_body(request: ChatRequest) -> dict[str, object]:
    """The chat completions JSON body for ``request``; unset fields are omitted. Streamed,
    unless the answer is ``collected`` (no one sees its deltas): then it is asked for whole."""
    body: dict[str, object] = {
        "model": request.model,
        "messages": [_message(m) for m in request.messages],
        "stream": not request.collected,
    }
    if not request.collected:
        body["stream_options"] = {"include_usage": True}
    for name in _PLAIN_FIELDS:
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = _tool_choice(request.tool_choice)
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.top_logprobs is not None:
        body["logprobs"] = True
        if request.top_logprobs > 0:
            body["top_logprobs"] = request.top_logprobs
    if request.response_format != "text":
        body["response_format"] = _response_format(request.response_format)
    if request.stop:
        body["stop"] = list(request.stop)
    if request.metadata:
        body["metadata"] = dict(request.metadata)
    if request.extra_body:
        body.update(request.extra_body)
    return body


def _message(message: ChatMessage) -> dict[str, object]:
    out: dict[str, object] = {"role": message.role, "content": _content(message.content)}
    if message.tool_calls:
        out["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.reasoning is not None:
        out["reasoning_content"] = message.reasoning
    return out


def _content(content: str | tuple[ContentPart, ...] | None) -> object:
    if content is None or isinstance(content, str):
        return content
    return [_part(part) for part in content]


def _part(part: ContentPart) -> dict[str, object]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": part.url, "detail": part.detail}}
    file: dict[str, object] = {}
    if part.filename is not None:
        file["filename"] = part.filename
    if part.data is not None:
        file["file_data"] = part.data
    if part.url is not None:
        file["file_url"] = part.url
    return {"type": "file", "file": file}


def _tool_call(call: ToolCall) -> dict[str, object]:
    function = {"name": call.name, "arguments": call.arguments}
    return {"id": call.id, "type": "function", "function": function}


def _tool(spec: FunctionSpec) -> dict[str, object]:
    function: dict[str, object] = {"name": spec.name, "parameters": spec.parameters}
    if spec.description is not None:
        function["description"] = spec.description
    if spec.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _tool_choice(choice: ToolChoice) -> object:
    if isinstance(choice, str):
        return choice
    return {"type": "function", "function": {"name": choice.name}}


def _response_format(fmt: ResponseFormat) -> dict[str, object]:
    if not isinstance(fmt, JsonSchemaFormat):
        return {"type": fmt}
    schema: dict[str, object] = {"name": fmt.name, "schema": fmt.schema}
    if fmt.strict:
        schema["strict"] = True
    if fmt.description is not None:
        schema["description"] = fmt.description
    return {"type": "json_schema", "json_schema": schema}
