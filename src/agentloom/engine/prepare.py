"""Everything that can be checked before a response starts: a bad request fails here, with a
clear 4xx, before any event is streamed or any row is written."""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence

from agentloom.api.items import Message, StoredItem
from agentloom.api.prompts import ResponsePrompt
from agentloom.api.requests import (
    ConversationRef,
    CreateResponseRequest,
    ReasoningConfig,
    TextFormatJsonObject,
    TextFormatJsonSchema,
)
from agentloom.api.response import Response
from agentloom.engine.attachments import Attachment, Attachments
from agentloom.engine.compaction import Compactions
from agentloom.engine.context import Context, History
from agentloom.engine.guardrails import GuardPlan, Guardrails, input_text, unavailable
from agentloom.engine.holds import ConversationHolds, Turn
from agentloom.engine.items import ItemFinder, stored_items, user_message
from agentloom.engine.loop import Budget, CompactionPlan, LoopConfig
from agentloom.engine.messages import Head
from agentloom.engine.reasoning import ENCRYPTED_INCLUDE, ReasoningOutput, SealedReasoning
from agentloom.engine.tool_plan import ToolPlan, plan_tools
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.inference import base as inf
from agentloom.inference.catalog import ModelCatalog, Resolved
from agentloom.offload import off_loop
from agentloom.tenancy import current_policy
from agentloom.tools.server_tools import ToolServices

LOGPROBS_INCLUDE = "message.output_text.logprobs"
LARGE_INPUT = 256  # input items from which chat messages are built off the event loop


@frozen
class EngineLimits:
    max_model_calls: int = 10
    truncation_retries: int = 4
    response_timeout: float | None = None  # seconds a response may run ([limits])


class Hold:
    """A response's lock on its conversation, held until the response ends (its items are
    appended) or is discarded without running (the lock is just released)."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.started = False  # the run began: it settles the hold when it ends


@frozen
class Prepared:
    response: Response  # the in-progress Response, every field echoed
    input_items: list[StoredItem]  # the request's own input, with ids
    seen: Context  # everything the model sees: the chain or conversation, then the input
    loop: LoopConfig
    store: bool
    hold: Hold | None = None  # the conversation the response runs on


@frozen
class LocalChain:
    """A response known to the caller without the store (a WebSocket connection's last
    response, possibly ``store: false``): its id and its whole chain."""

    response_id: str
    chain: Context


@frozen
class Preview:
    """What a request would send to the model."""

    resolved: Resolved
    seen: Context
    request: inf.ChatRequest


class Preparer:
    """Turns a request into a :class:`Prepared` response, step by step:

    check -> resolve the model -> plan tools -> load the previous_response_id chain ->
    hold the conversation (lock + history) -> input items -> chat request
    """

    def __init__(
        self,
        *,
        catalog: ModelCatalog,
        finder: ItemFinder,
        histories: History,
        conversations: ConversationHolds,
        compactions: Compactions,
        sealed_reasoning: SealedReasoning,
        limits: EngineLimits,
        tools: ToolServices | None = None,
        attachments: Attachments | None = None,
        guardrails: Guardrails | None = None,
    ) -> None:
        self._catalog = catalog
        self._guardrails = guardrails
        self._tools = tools or ToolServices()
        self._attachments = attachments or Attachments()
        self._finder = finder
        self._histories = histories
        self._conversations = conversations
        self._compactions = compactions
        self._sealed_reasoning = sealed_reasoning
        self._limits = limits

    async def prepare(
        self,
        request: CreateResponseRequest,
        *,
        local: LocalChain | None = None,
        media: Message | None = None,
        identity: tuple[str, int] | None = None,
    ) -> Prepared:
        """``media``: a prompt's image and file values, shown after the instructions;
        ``identity``: the id and creation time the response already has (a background
        response, queued earlier)."""
        _check_unsupported(request)
        model_calls = self._model_calls(request)
        guards = self._guards(request)
        resolved = await self._catalog.resolve(request.model)
        tools = self._plan_tools(request)
        for tool in tools.server.values():
            await tool.check()
        for toolset in tools.toolsets:
            await toolset.check()
        threshold = _compact_threshold(request, resolved)
        chain = await self._chain(request.previous_response_id, local)
        response = _skeleton(request, identity)
        conversation_id = request.conversation_id()
        hold = None
        if conversation_id is not None:
            hold = Hold(await self._conversations.begin_turn(conversation_id, response.id))
        try:
            items = await self._input(request, hold)
            files = await self._attachments.resolve(items, param="input")
            before = hold.turn.context if hold is not None else chain
            seen = await _extended(before, items, files)
            tools = tools.with_loaded(seen.items, first_new=len(before.items))  # tool searches
        except BaseException:
            if hold is not None:
                await self._conversations.release(hold.turn)
            raise
        head = Head(request.instructions, media)
        compaction = None
        if threshold is not None:
            compaction = CompactionPlan(threshold, seen, head, self._compactions)
        return Prepared(
            response=response,
            input_items=items,
            seen=seen,
            store=request.store,
            hold=hold,
            loop=self._loop(
                request,
                resolved,
                tools,
                seen.chat.render(head),
                model_calls,
                compaction=compaction,
                earlier=seen.items,
                guards=None if guards is None else guards.with_input(input_text(items)),
            ),
        )

    async def preview(self, request: CreateResponseRequest) -> Preview:
        """What ``request`` would send to the model, without running it or holding anything
        (a conversation is read, not locked): for token counts and ``/responses/compact``."""
        _check_unsupported(request)
        resolved = await self._catalog.resolve(request.model)
        tools = self._plan_tools(request)
        conversation_id = request.conversation_id()
        if conversation_id is not None:
            before = await self._conversations.peek(conversation_id)
        else:
            before = await self._chain(request.previous_response_id, None)
        items = await self._input(request, None)
        files = await self._attachments.resolve(items, param="input")
        seen = await _extended(before, items, files)
        tools = tools.with_loaded(seen.items, first_new=len(before.items))
        messages = seen.chat.render(Head(request.instructions))
        loop = self._loop(request, resolved, tools, messages, self._limits.max_model_calls)
        return Preview(resolved=resolved, seen=seen, request=loop.request)

    def _model_calls(self, request: CreateResponseRequest) -> int:
        """The model calls the response may make: ``max_infer_iters``, at most the server's
        limit (above it: a 400 naming the limit); the server's limit when left out."""
        cap = self._limits.max_model_calls
        asked = request.max_infer_iters
        if asked is None:
            return cap
        if asked > cap:
            raise InvalidRequestError(
                "Invalid 'max_infer_iters': integer above maximum value. Expected a value less "
                f"than or equal to {cap} (this server's limit of model calls per response), "
                f"but got {asked} instead.",
                param="max_infer_iters",
                code="integer_above_max_value",
            )
        return asked

    def _guards(self, request: CreateResponseRequest) -> GuardPlan | None:
        """The request's guardrails and moderation (unknown shields: a 400, before anything
        runs or is stored)."""
        if self._guardrails is None:
            unavailable(request)
            return None
        return self._guardrails.plan(request)

    def _plan_tools(self, request: CreateResponseRequest) -> ToolPlan:
        return plan_tools(
            request.tools,
            request.tool_choice,
            parallel=request.parallel_tool_calls,
            services=self._tools,
            include=request.include,
        )

    async def _chain(self, previous_response_id: str | None, local: LocalChain | None) -> Context:
        if local is not None and previous_response_id == local.response_id:
            return local.chain
        return await self._histories.load(previous_response_id)

    async def _input(self, request: CreateResponseRequest, hold: Hold | None) -> list[StoredItem]:
        if isinstance(request.input, str):
            return [user_message(request.input)]
        items = await stored_items(
            self._finder, request.input, param="input", for_conversation=hold is not None
        )
        items = self._sealed_reasoning.opened(items, param="input")  # stateless replay
        if hold is not None:
            await self._conversations.check_new(hold.turn, items, param="input")
        return items

    def _loop(
        self,
        request: CreateResponseRequest,
        resolved: Resolved,
        tools: ToolPlan,
        messages: Sequence[inf.ChatMessage],
        max_model_calls: int,
        *,
        compaction: CompactionPlan | None = None,
        earlier: Sequence[StoredItem] = (),
        guards: GuardPlan | None = None,
    ) -> LoopConfig:
        include_logprobs = LOGPROBS_INCLUDE in request.include
        chat = _chat_request(request, resolved.model.backend_id, messages, tools, include_logprobs)
        return LoopConfig(
            provider=resolved.provider,
            request=chat,
            tools=tools,
            max_output_tokens=request.max_output_tokens,
            max_model_calls=max_model_calls,
            truncation=request.truncation,
            truncation_retries=self._limits.truncation_retries,
            context_window=resolved.model.info.context_window,
            include_logprobs=include_logprobs,
            compaction=compaction,
            max_tool_calls=request.max_tool_calls,
            reasoning=self._reasoning_output(request, resolved),
            provider_name=resolved.model.provider_name,
            earlier=earlier,
            guards=guards,
            budget=self._budget(),
        )

    def _budget(self) -> Budget | None:
        """The project's own response_timeout, else the server's."""
        own = current_policy().response_timeout
        if own is not None:
            return Budget(own, "the project's response_timeout")
        seconds = self._limits.response_timeout
        return None if seconds is None else Budget(seconds)

    def _reasoning_output(
        self, request: CreateResponseRequest, resolved: Resolved
    ) -> ReasoningOutput:
        """Reasoning items sealed when the request includes ``reasoning.encrypted_content``,
        summarised when it asks for a summary."""
        sealed = ENCRYPTED_INCLUDE in request.include
        return ReasoningOutput(
            sealed=self._sealed_reasoning if sealed else None,
            model=resolved.model.id,
            summary=request.reasoning.summary if request.reasoning else None,
        )


async def _extended(
    before: Context, items: list[StoredItem], files: Mapping[str, Attachment]
) -> Context:
    """``before`` followed by the request's input: in a worker thread when the input is large,
    so that turning thousands of items into chat messages does not hold up the event loop."""
    extend = functools.partial(before.extended, items, param="input", files=files)
    return await off_loop(len(items) >= LARGE_INPUT, extend)


def _compact_threshold(request: CreateResponseRequest, resolved: Resolved) -> int | None:
    """``context_management``'s threshold; when ``compact_threshold`` is left out, 80% of the
    model's context window, which must then be known."""
    if not request.context_management:
        return None
    threshold = request.context_management[0].compact_threshold
    if threshold is not None:
        return threshold
    window = resolved.model.info.context_window
    if window is None:
        raise InvalidRequestError(
            f"The context window of model '{resolved.model.id}' is unknown: give "
            "'compact_threshold' (in tokens).",
            param="context_management[0].compact_threshold",
            code="missing_required_parameter",
        )
    return window * 4 // 5


def _check_unsupported(request: CreateResponseRequest) -> None:
    if request.conversation is not None and request.previous_response_id is not None:
        raise InvalidRequestError(
            "Use either 'conversation' or 'previous_response_id', not both.",
            param="previous_response_id",
            code="invalid_request",
        )
    if request.background and not request.store:
        raise InvalidRequestError(
            "Background responses must be stored: 'background' needs 'store' true.",
            param="background",
        )
    if not request.input and request.previous_response_id is None:
        raise InvalidRequestError(
            "'input' is required.", param="input", code="missing_required_parameter"
        )


def _skeleton(request: CreateResponseRequest, identity: tuple[str, int] | None) -> Response:
    tier = request.service_tier
    conversation_id = request.conversation_id()
    response_id, created_at = identity or (new_id("resp"), int(time.time()))
    return Response(
        id=response_id,
        created_at=created_at,
        status="in_progress",
        background=request.background,
        conversation=None if conversation_id is None else ConversationRef(id=conversation_id),
        instructions=request.instructions,
        max_output_tokens=request.max_output_tokens,
        max_tool_calls=request.max_tool_calls,
        max_infer_iters=request.max_infer_iters,
        metadata=request.metadata or {},
        model=request.model,
        parallel_tool_calls=request.parallel_tool_calls,
        previous_response_id=request.previous_response_id,
        prompt=ResponsePrompt.echo(request.prompt),
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
    tools: ToolPlan,
    include_logprobs: bool,
) -> inf.ChatRequest:
    # Logprobs cost the backend work: asked for only when the response will show them.
    top_logprobs = (request.top_logprobs or 0) if include_logprobs else None
    return inf.ChatRequest(
        model=backend_model,
        messages=tuple(messages),
        tools=tools.specs,
        tool_choice=tools.choice,
        parallel_tool_calls=False if tools.specs and not request.parallel_tool_calls else None,
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
