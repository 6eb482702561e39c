"""Reading chat completion requests back into :class:`ChatRequest` (the fake backend's input).

Strict where it matters: a body that is not what a chat client sends is a ``BadRequestError``
(the fake backend answers it 400), so tests notice when agentloom sends something malformed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, TypeVar

from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    ContentPart,
    FilePart,
    FunctionSpec,
    ImagePart,
    JsonSchemaFormat,
    NamedToolChoice,
    ResponseFormat,
    Role,
    TextPart,
    ToolCall,
    ToolChoice,
)
from agentloom.json_types import JSONObject

__all__ = ["BadRequestError", "json_object", "parse_chat_request"]

_T = TypeVar("_T")


class BadRequestError(ValueError):
    """The body is not a chat completions request this backend understands."""


_ROLES: Final[Mapping[object, Role]] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
_DETAILS: Final[Mapping[object, Literal["low", "high", "auto"]]] = {
    "low": "low",
    "high": "high",
    "auto": "auto",
}
_CHOICES: Final[Mapping[object, Literal["auto", "none", "required"]]] = {
    "auto": "auto",
    "none": "none",
    "required": "required",
}


def json_object(value: object, what: str) -> JSONObject:
    """``value`` (decoded by ``json.loads``, so its members are JSON) as a JSON object."""
    if not isinstance(value, dict):
        raise BadRequestError(f"{what} must be a JSON object")
    return value


def _list(value: object, what: str) -> list[object]:
    if not isinstance(value, list):
        raise BadRequestError(f"'{what}' must be an array")
    return value


def _opt(obj: Mapping[str, object], key: str, kind: type[_T]) -> _T | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
        return value
    raise BadRequestError(f"'{key}' must be of type {kind.__name__}")


def _float(obj: Mapping[str, object], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise BadRequestError(f"'{key}' must be a number")


def _str(obj: Mapping[str, object], key: str) -> str:
    value = _opt(obj, key, str)
    if value is None:
        raise BadRequestError(f"'{key}' is required")
    return value


def parse_chat_request(body: object) -> ChatRequest:
    """Read a chat completions JSON body back into the :class:`ChatRequest` it expresses."""
    obj = json_object(body, "the request body")
    top_logprobs = _opt(obj, "top_logprobs", int) or 0
    max_tokens = _opt(obj, "max_completion_tokens", int)
    return ChatRequest(
        model=_str(obj, "model"),
        messages=tuple(_message(m) for m in _list(obj.get("messages"), "messages")),
        tools=tuple(_tool(t) for t in _list(obj.get("tools") or [], "tools")),
        tool_choice=_tool_choice(obj.get("tool_choice")),
        parallel_tool_calls=_opt(obj, "parallel_tool_calls", bool),
        temperature=_float(obj, "temperature"),
        top_p=_float(obj, "top_p"),
        presence_penalty=_float(obj, "presence_penalty"),
        frequency_penalty=_float(obj, "frequency_penalty"),
        max_tokens=max_tokens if max_tokens is not None else _opt(obj, "max_tokens", int),
        top_logprobs=top_logprobs if obj.get("logprobs") is True else None,
        response_format=_response_format(obj.get("response_format")),
        reasoning_effort=_opt(obj, "reasoning_effort", str),
        user=_opt(obj, "user", str),
        prompt_cache_key=_opt(obj, "prompt_cache_key", str),
        safety_identifier=_opt(obj, "safety_identifier", str),
        service_tier=_opt(obj, "service_tier", str),
    )


def _message(value: object) -> ChatMessage:
    obj = json_object(value, "a message")
    role = _ROLES.get(obj.get("role"))
    if role is None:
        raise BadRequestError(f"unsupported message role {obj.get('role')!r}")
    reasoning = _opt(obj, "reasoning_content", str)
    return ChatMessage(
        role=role,
        content=_content(obj.get("content")),
        tool_calls=tuple(_call(c) for c in _list(obj.get("tool_calls") or [], "tool_calls")),
        tool_call_id=_opt(obj, "tool_call_id", str),
        reasoning=reasoning if reasoning is not None else _opt(obj, "reasoning", str),
    )


def _content(value: object) -> str | tuple[ContentPart, ...] | None:
    if value is None or isinstance(value, str):
        return value
    return tuple(_part(part) for part in _list(value, "content"))


def _part(value: object) -> ContentPart:
    obj = json_object(value, "a content part")
    kind = obj.get("type")
    if kind == "text":
        return TextPart(_str(obj, "text"))
    if kind == "image_url":
        image = json_object(obj.get("image_url"), "'image_url'")
        detail = _DETAILS.get(image.get("detail", "auto"))
        if detail is None:
            raise BadRequestError(f"unsupported image detail {image.get('detail')!r}")
        return ImagePart(url=_str(image, "url"), detail=detail)
    if kind == "file":
        file = json_object(obj.get("file"), "'file'")
        return FilePart(
            filename=_opt(file, "filename", str),
            data=_opt(file, "file_data", str),
            url=_opt(file, "file_url", str),
        )
    raise BadRequestError(f"unsupported content part type {kind!r}")


def _call(value: object) -> ToolCall:
    obj = json_object(value, "a tool call")
    function = json_object(obj.get("function"), "'function'")
    return ToolCall(
        id=_str(obj, "id"), name=_str(function, "name"), arguments=_str(function, "arguments")
    )


def _tool(value: object) -> FunctionSpec:
    obj = json_object(value, "a tool")
    if obj.get("type") != "function":
        raise BadRequestError(f"unsupported tool type {obj.get('type')!r}")
    function = json_object(obj.get("function"), "'function'")
    return FunctionSpec(
        name=_str(function, "name"),
        description=_opt(function, "description", str),
        parameters=json_object(function.get("parameters") or {}, "'parameters'"),
        strict=_opt(function, "strict", bool) or False,
    )


def _tool_choice(value: object) -> ToolChoice | None:
    if value is None:
        return None
    choice = _CHOICES.get(value) if isinstance(value, str) else None
    if choice is not None:
        return choice
    obj = json_object(value, "'tool_choice'")
    return NamedToolChoice(_str(json_object(obj.get("function"), "'function'"), "name"))


def _response_format(value: object) -> ResponseFormat:
    if value is None:
        return "text"
    obj = json_object(value, "'response_format'")
    kind = obj.get("type")
    if kind == "text":
        return "text"
    if kind == "json_object":
        return "json_object"
    if kind != "json_schema":
        raise BadRequestError(f"unsupported response_format type {kind!r}")
    schema = json_object(obj.get("json_schema"), "'json_schema'")
    return JsonSchemaFormat(
        name=_str(schema, "name"),
        schema=json_object(schema.get("schema") or {}, "'schema'"),
        strict=_opt(schema, "strict", bool) or False,
        description=_opt(schema, "description", str),
    )
