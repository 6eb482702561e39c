"""Everything that can be checked before a response starts: a bad request fails here, with a
clear 4xx, before any event is streamed or any row is written."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass

from agentloom.api.items import (
    STORED_ITEM,
    FunctionCall,
    FunctionCallOutput,
    InputItem,
    ItemReference,
    Message,
    Reasoning,
    StoredItem,
)
from agentloom.api.requests import (
    CreateResponseRequest,
    ReasoningConfig,
    TextFormatJsonObject,
    TextFormatJsonSchema,
)
from agentloom.api.response import Response
from agentloom.engine.history import History
from agentloom.engine.loop import LoopConfig
from agentloom.engine.messages import to_chat_messages
from agentloom.engine.tool_plan import plan_tools
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.ids import new_id
from agentloom.inference import base as inf
from agentloom.inference.catalog import ModelCatalog
from agentloom.storage.base import ResponseStore

LOGPROBS_INCLUDE = "message.output_text.logprobs"
_ITEM_PREFIX = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "reasoning": "rs",
}


@dataclass(frozen=True, slots=True)
class EngineLimits:
    max_model_calls: int = 10
    truncation_retries: int = 4


@dataclass(frozen=True, slots=True)
class Prepared:
    response: Response  # the in-progress Response, every field echoed
    input_items: list[StoredItem]  # the request's own input, with ids
    history: tuple[StoredItem, ...]  # the previous_response_id chain's items, oldest first
    loop: LoopConfig
    store: bool


async def prepare(
    request: CreateResponseRequest,
    *,
    catalog: ModelCatalog,
    store: ResponseStore,
    histories: History,
    limits: EngineLimits,
) -> Prepared:
    _check_unsupported(request)
    resolved = await catalog.resolve(request.model)
    tools = plan_tools(request.tools, request.tool_choice, parallel=request.parallel_tool_calls)
    history = await histories.load(request.previous_response_id)
    items = await _input_items(store, request)
    messages = to_chat_messages(request.instructions, [*history, *items], first_new=len(history))
    include_logprobs = LOGPROBS_INCLUDE in request.include
    chat = _chat_request(request, resolved.model.backend_id, messages, include_logprobs)
    chat = dataclasses.replace(
        chat,
        tools=tools.specs,
        tool_choice=tools.choice,
        parallel_tool_calls=False if tools.specs and not request.parallel_tool_calls else None,
    )
    return Prepared(
        response=_skeleton(request),
        input_items=items,
        history=history,
        store=request.store,
        loop=LoopConfig(
            provider=resolved.provider,
            request=chat,
            tools=tools,
            max_output_tokens=request.max_output_tokens,
            max_model_calls=limits.max_model_calls,
            truncation=request.truncation,
            truncation_retries=limits.truncation_retries,
            context_window=resolved.model.info.context_window,
            include_logprobs=include_logprobs,
        ),
    )


def _check_unsupported(request: CreateResponseRequest) -> None:
    if request.conversation is not None and request.previous_response_id is not None:
        raise InvalidRequestError(
            "Use either 'conversation' or 'previous_response_id', not both.",
            param="previous_response_id",
            code="invalid_request",
        )
    if request.conversation is not None:
        raise InvalidRequestError(
            "Conversations are not supported by this server yet.", param="conversation"
        )
    if request.background:
        raise InvalidRequestError(
            "Background mode is not supported by this server yet.", param="background"
        )
    if not request.input and request.previous_response_id is None:
        raise InvalidRequestError(
            "'input' is required.", param="input", code="missing_required_parameter"
        )


async def _input_items(store: ResponseStore, request: CreateResponseRequest) -> list[StoredItem]:
    if isinstance(request.input, str):
        message = {"id": new_id("msg"), "role": "user", "content": request.input}
        return [Message.model_validate({**message, "status": "completed"})]
    return [await _resolve_item(store, item, i) for i, item in enumerate(request.input)]


async def _resolve_item(store: ResponseStore, item: InputItem, index: int) -> StoredItem:
    if isinstance(item, ItemReference):
        row = await store.find_item(item.id)
        if row is None:
            raise NotFoundError(f"Item with id '{item.id}' not found.", param=f"input[{index}].id")
        return STORED_ITEM.validate_json(row.body)
    return _with_id(item)


def _with_id(item: Message | FunctionCall | FunctionCallOutput | Reasoning) -> StoredItem:
    update: dict[str, object] = {}
    if item.id is None:
        update["id"] = new_id(_ITEM_PREFIX[item.type])
    if item.status is None:
        update["status"] = "completed"
    return item.model_copy(update=update) if update else item


def _skeleton(request: CreateResponseRequest) -> Response:
    tier = request.service_tier
    return Response(
        id=new_id("resp"),
        created_at=int(time.time()),
        status="in_progress",
        instructions=request.instructions,
        max_output_tokens=request.max_output_tokens,
        max_tool_calls=request.max_tool_calls,
        metadata=request.metadata or {},
        model=request.model,
        parallel_tool_calls=request.parallel_tool_calls,
        previous_response_id=request.previous_response_id,
        prompt_cache_key=request.prompt_cache_key,
        reasoning=request.reasoning or ReasoningConfig(),
        safety_identifier=request.safety_identifier,
        service_tier="default" if tier in (None, "auto") else tier,
        store=request.store,
        temperature=1.0 if request.temperature is None else request.temperature,
        text=request.text,
        tool_choice=request.tool_choice,
        tools=request.tools,
        top_logprobs=request.top_logprobs or 0,
        top_p=1.0 if request.top_p is None else request.top_p,
        presence_penalty=request.presence_penalty or 0.0,
        frequency_penalty=request.frequency_penalty or 0.0,
        truncation=request.truncation,
        user=request.user,
    )


def _chat_request(
    request: CreateResponseRequest,
    backend_model: str,
    messages: Sequence[inf.ChatMessage],
    include_logprobs: bool,
) -> inf.ChatRequest:
    # Logprobs cost the backend work: asked for only when the response will show them.
    top_logprobs = (request.top_logprobs or 0) if include_logprobs else None
    return inf.ChatRequest(
        model=backend_model,
        messages=tuple(messages),
        temperature=request.temperature,
        top_p=request.top_p,
        presence_penalty=request.presence_penalty,
        frequency_penalty=request.frequency_penalty,
        top_logprobs=top_logprobs,
        response_format=_response_format(request),
        reasoning_effort=request.reasoning.effort if request.reasoning else None,
        user=request.user,
        prompt_cache_key=request.prompt_cache_key,
        safety_identifier=request.safety_identifier,
        service_tier=request.service_tier,
    )


def _response_format(request: CreateResponseRequest) -> inf.ResponseFormat:
    fmt = request.text.format
    if isinstance(fmt, TextFormatJsonObject):
        return "json_object"
    if isinstance(fmt, TextFormatJsonSchema):
        return inf.JsonSchemaFormat(
            name=fmt.name,
            schema=fmt.schema_,  # type: ignore[arg-type]
            strict=bool(fmt.strict),
            description=fmt.description,
        )
    return "text"
