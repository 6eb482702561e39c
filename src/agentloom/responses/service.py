"""The responses service: prepare, run the loop, persist; and read stored responses back.

Persistence rules: ``store: false`` writes nothing. Otherwise see
:mod:`agentloom.responses.persist`: the final state and output are written *before* the
terminal event is released, so a client that reacts to ``response.completed`` always finds it.
A stream abandoned by its consumer (client disconnect) is finalised as ``cancelled``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial

from agentloom import json_codec
from agentloom.api import events as ev
from agentloom.api.compaction import CompactedResponse, CompactRequest
from agentloom.api.items import STORED_ITEMS, Message, OutputItem, OutputMessage, StoredItem
from agentloom.api.lists import ListPage
from agentloom.api.requests import CreateResponseRequest
from agentloom.api.response import DeletedResponse, Response
from agentloom.api.token_count import InputTokensRequest
from agentloom.api.traces import ResponseTrace
from agentloom.engine.attachments import Attachments
from agentloom.engine.compaction import Compactions, compact
from agentloom.engine.context import History
from agentloom.engine.guardrails import Guardrails
from agentloom.engine.items import ItemFinder
from agentloom.engine.loop import AgentLoop, Failure
from agentloom.engine.prepare import EngineLimits, LocalChain, Prepared, Preparer
from agentloom.engine.reasoning import SealedReasoning
from agentloom.engine.spans import agent_run, run_trace
from agentloom.errors import (
    AgentloomError,
    ContextLengthExceededError,
    DatabaseUnavailableError,
    InternalError,
    InvalidRequestError,
    NotFoundError,
)
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.inference.catalog import ModelCatalog
from agentloom.logs import RESPONSES, response_ended, set_response_id
from agentloom.metrics import Metrics
from agentloom.responses.persist import DEFAULT_BEGIN_DELAY, LostWrites, ResponseWriter
from agentloom.services.conversations import ConversationsService, appended, turn_row
from agentloom.services.organization.usage import UsageLedger
from agentloom.services.prompts import PromptsService
from agentloom.storage.base import ItemRow, Order, ResponseQuery, ResponseRow, ResponseStore
from agentloom.tools.server_tools import ToolServices

_TERMINAL_EVENTS = (ev.ResponseCompleted, ev.ResponseIncomplete, ev.ResponseFailed)
# the model's first token: text, a refusal, reasoning or a function call's arguments
_FIRST_OUTPUT = (
    ev.OutputTextDelta,
    ev.RefusalDelta,
    ev.ReasoningTextDelta,
    ev.FunctionCallArgumentsDelta,
)


class _Timed:
    """One response's metrics: in flight while it runs, its first output and its end timed."""

    __slots__ = ("metrics", "model", "waiting")

    def __init__(self, metrics: Metrics, model: str) -> None:
        self.metrics, self.model, self.waiting = metrics, model, True
        metrics.responses_in_flight.inc()

    def saw(self, event: ev.StreamEvent, loop: AgentLoop) -> None:
        if isinstance(event, _FIRST_OUTPUT):
            self.waiting = False
            self.metrics.first_token(self.model, loop.elapsed())

    def collected(self, loop: AgentLoop) -> None:
        """A collected run's first output, as its loop timed it (it made no delta events)."""
        if self.waiting and loop.first_output is not None:
            self.waiting = False
            self.metrics.first_token(self.model, loop.first_output - loop.started)

    def ended(self, loop: AgentLoop) -> None:
        self.metrics.responses_in_flight.dec()
        self.metrics.response_done(self.model, loop.elapsed())


@dataclass(slots=True)
class _Collected:
    """A collected response, and its JSON if it was made to store it."""

    response: Response
    json: str | None


class _Run:
    """One response's run as the service follows it: what it writes, what it times, and
    whether its end was written."""

    __slots__ = ("finished", "loop", "prepared", "reply", "timed", "writer")

    def __init__(
        self,
        prepared: Prepared,
        loop: AgentLoop,
        writer: ResponseWriter | None,
        timed: _Timed | None,
    ) -> None:
        self.prepared, self.loop, self.writer, self.timed = prepared, loop, writer, timed
        self.finished = False
        self.reply: str | None = None  # the final response's JSON, made when it was written

    def events(self) -> AsyncGenerator[ev.StreamEvent, None]:
        """The loop's events (in the run's ``invoke_agent`` span when tracing is on)."""
        loop = self.loop
        return agent_run(loop.run(), lambda: loop.response, loop.timeline)

    def saw(self, event: ev.StreamEvent) -> Response | None:
        """The response of a terminal event (``None`` for any other); the first output timed."""
        timed = self.timed
        if timed is not None and timed.waiting:
            timed.saw(event, self.loop)
        if isinstance(event, _TERMINAL_EVENTS):
            return event.response
        return None


@frozen
class ItemPageQuery:
    after: str | None = None
    before: str | None = None
    limit: int = 20
    order: Order = "desc"


class ResponsesService:
    def __init__(
        self,
        *,
        catalog: ModelCatalog,
        store: ResponseStore,
        conversations: ConversationsService,
        finder: ItemFinder,
        limits: EngineLimits,
        prompts: PromptsService,
        compactions: Compactions,
        sealed_reasoning: SealedReasoning,
        tools: ToolServices | None = None,
        attachments: Attachments | None = None,
        guardrails: Guardrails | None = None,
        usage: UsageLedger | None = None,
        log_content: bool = False,
        metrics: Metrics | None = None,
        in_progress_after: float = DEFAULT_BEGIN_DELAY,
    ) -> None:
        """``log_content``: each ended response's log line holds its input and output text;
        ``metrics``: responses, their first tokens and model calls timed;
        ``in_progress_after``: seconds to a stored response's in-progress row."""
        self._metrics = metrics
        self._in_progress_after = in_progress_after
        self._catalog = catalog
        self._log_content = log_content
        self._usage = usage
        self.lost_writes = LostWrites()  # written by the server's housekeeping
        self._store = store
        self._prompts = prompts
        self._compactions = compactions
        self._conversations = conversations
        self._histories = History(store, compactions.read, attachments=attachments)
        self._preparer = Preparer(
            catalog=catalog,
            finder=finder,
            histories=self._histories,
            conversations=conversations,
            compactions=compactions,
            sealed_reasoning=sealed_reasoning,
            limits=limits,
            tools=tools,
            attachments=attachments,
            guardrails=guardrails,
        )

    # --- create ------------------------------------------------------------------------------

    async def prepare(
        self,
        request: CreateResponseRequest,
        *,
        local: LocalChain | None = None,
        identity: tuple[str, int] | None = None,
    ) -> Prepared:
        """Validate and resolve a request; raises the caller's mistakes before anything runs.
        A prepared response that holds a conversation must be run or :meth:`discard` ed.
        ``identity``: the id and creation time of a queued background response."""
        applied = await self._prompts.apply(request)  # a `prompt` rendered into the request
        return await self._preparer.prepare(
            applied.request, local=local, media=applied.media, identity=identity
        )

    async def compact(self, request: CompactRequest) -> CompactedResponse:
        """``/responses/compact``: the context summarised into one compaction item."""
        preview = await self._preparer.preview(request.as_create())
        return await compact(self._compactions, preview.resolved, preview.seen)

    async def count_input_tokens(self, request: InputTokensRequest) -> inf.TokenCount:
        """The input tokens of the request a create would send (see docs/token-counting.md)."""
        model = request.model or self._catalog.only_model()
        preview = await self._preparer.preview(request.as_create(model))
        return await preview.resolved.provider.count_tokens(preview.request)

    def local_chain(self, prepared: Prepared, response: Response) -> LocalChain:
        """What a later ``previous_response_id`` naming ``response`` continues, kept by the
        caller (a WebSocket connection) so that it works without the store (``store: false``)."""
        output = [_as_stored(item) for item in response.output]
        return LocalChain(response.id, prepared.seen.extended(output))

    async def discard(self, prepared: Prepared) -> None:
        """Release what a prepared response holds if it never ran (its client went away before
        the stream started); nothing once it ran."""
        hold = prepared.hold
        if hold is not None and not hold.started:
            hold.started = True
            await self._conversations.release(hold.turn)

    async def stream(
        self, prepared: Prepared, *, released: Callable[[], bool] | None = None
    ) -> AsyncGenerator[ev.StreamEvent, None]:
        """The response's events. ``released()`` true when the stream is stopped: its job was
        let go (handed back or taken over), so its end is not written (the job's next run
        writes one)."""
        run = self._start(prepared, self._loop(prepared))
        try:
            # closed here, in this task, when the consumer goes away: the loop's connections
            # (MCP sessions) close with it
            async with aclosing(run.events()) as events:
                async for event in events:
                    ended = run.saw(event)
                    if ended is not None:
                        await self._ended(run, ended)
                    yield event
        finally:
            await self._stopped(run, released)

    async def collect(self, prepared: Prepared) -> Response:
        """The non-streaming reply: the same stream, collected. A failed response (stored as
        such) is the caller's error, as OpenAI answers: 429 for rate limits, 400 for a context
        that does not fit, 502/504 for the backend failing or timing out."""
        return (await self._collected(prepared)).response

    async def collect_json(self, prepared: Prepared) -> str:
        """:meth:`collect`'s response as JSON (``model_dump_json()``), encoded once for its
        stored row and its reply."""
        collected = await self._collected(prepared)
        return collected.response.model_dump_json() if collected.json is None else collected.json

    async def _collected(self, prepared: Prepared) -> _Collected:
        run = self._start(prepared, self._loop(prepared, collected=True))
        final: Response | None = None
        try:
            async with aclosing(run.events()) as events:
                async for event in events:
                    ended = run.saw(event)
                    if ended is not None:
                        final = ended
                        if run.timed is not None:
                            run.timed.collected(run.loop)
                        await self._ended(run, ended)
        finally:
            await self._stopped(run, None)
        assert final is not None, "the loop always ends with a terminal event"
        if run.loop.failure is not None:
            raise _caller_error(run.loop.failure, final, stored=prepared.store)
        return _Collected(final, run.reply)

    def _loop(self, prepared: Prepared, *, collected: bool = False) -> AgentLoop:
        return AgentLoop(
            prepared.response, prepared.loop, collected=collected, observer=self._metrics
        )

    def _start(self, prepared: Prepared, loop: AgentLoop) -> _Run:
        """The run begins: its conversation turn taken, its writer and metrics set up."""
        if prepared.hold is not None:
            if prepared.hold.started:
                raise InternalError("a prepared response runs once")
            prepared.hold.started = True
        set_response_id(prepared.response.id)
        writer = None
        if prepared.store:
            writer = ResponseWriter(
                self._store,
                prepared.response,
                prepared.input_items,
                begin_delay=self._in_progress_after,
                queued=prepared.response.background,  # its row exists since it was queued
                lost=self.lost_writes,
            )
        timed = None if self._metrics is None else _Timed(self._metrics, prepared.response.model)
        return _Run(prepared, loop, writer, timed)

    async def _ended(self, run: _Run, response: Response) -> None:
        """The terminal event: the response is stored (before the event is released)."""
        run.finished = True  # a final write that fails is not made again as cancelled
        run.reply = await self._finish(run.writer, run.prepared, response, run.loop)
        self._record(run.prepared, response, run.loop)

    async def _stopped(self, run: _Run, released: Callable[[], bool] | None) -> None:
        """The run's events stopped: ended, abandoned by the consumer (finalised
        ``cancelled``), or let go (``released``: not finished here)."""
        prepared, loop = run.prepared, run.loop
        if not run.finished and released is not None and released():
            run.finished = True  # let go: the job's next run ends it
            if prepared.hold is not None:  # its conversation is not held meanwhile
                await self._conversations.release(prepared.hold.turn)
        if not run.finished:
            abandoned = loop.abandoned()
            await self._finish(run.writer, prepared, abandoned, loop)
            self._record(prepared, abandoned, loop)
        if run.timed is not None:
            run.timed.ended(loop)

    async def _finish(
        self,
        writer: ResponseWriter | None,
        prepared: Prepared,
        response: Response,
        loop: AgentLoop,
    ) -> str | None:
        """Store the final state with the run's trace (and end the conversation turn) before
        the terminal event is released, so a client reacting to it finds both; the response's
        JSON, when it was written."""
        hold = prepared.hold
        trace = None if writer is None else run_trace(loop.timeline, response)
        if hold is None:
            if writer is None:
                return None
            written = await writer.finish(response, trace=trace)
            self._histories.remember(response.id, prepared.seen, partial(_output, response))
            return written
        after = hold.turn.context  # a failed or cancelled response adds nothing
        if _joins(response):
            after = prepared.seen.extended([_as_stored(item) for item in response.output])
        if writer is None:
            await self._conversations.end_turn(hold.turn, after)
            return None
        turn = turn_row(hold.turn, appended(hold.turn, after))
        written = await writer.finish(response, turn, trace)
        self._conversations.ended(hold.turn, after)
        return written

    def _record(self, prepared: Prepared, response: Response, loop: AgentLoop) -> None:
        """Count the response's usage (in memory: the ledger writes it later); log its end."""
        if self._usage is not None:
            self._usage.record(response, model_calls=loop.model_calls)
        if RESPONSES.isEnabledFor(logging.INFO):
            inputs = prepared.input_items if self._log_content else None
            response_ended(response, loop.model_calls, loop.started, inputs)

    # --- read --------------------------------------------------------------------------------

    async def get(self, response_id: str) -> Response:
        stored = await self._store.get(response_id)
        if stored is None:
            raise _not_found(response_id)
        return _response(stored.response, stored.output)

    async def trace(self, response_id: str) -> ResponseTrace:
        """The stored response's run as recorded when it ended (:mod:`agentloom.timeline`)."""
        stored = await self._store.trace(response_id)
        if stored is None:
            raise _not_found(response_id)
        if stored.trace is None:
            raise _no_trace(response_id, stored.status)
        body = json_codec.loads(stored.trace)
        assert isinstance(body, dict), "a stored trace is a JSON object"
        return ResponseTrace.model_validate({**body, "response_id": response_id})

    async def reset(self, row: ResponseRow) -> None:
        """Rewrite a background response's row (back to the queue, or settled by its job's
        runner), its items dropped."""
        self._histories.forget(row.id)
        await self._store.reset(row)

    async def delete(self, response_id: str) -> DeletedResponse:
        self._histories.clear()
        if not await self._store.delete(response_id):
            raise _not_found(response_id)
        return DeletedResponse(id=response_id)

    async def list(self, query: ResponseQuery) -> ListPage[Response]:
        page = await self._store.list_page(query)
        outputs = await self._store.outputs([row.id for row in page.data])
        data = [_response(row, outputs.get(row.id, [])) for row in page.data]
        return ListPage[Response](
            data=data,
            first_id=data[0].id if data else None,
            last_id=data[-1].id if data else None,
            has_more=page.has_more,
        )

    async def input_items(self, response_id: str, query: ItemPageQuery) -> ListPage[StoredItem]:
        page = await self._store.input_items(
            response_id,
            after=query.after,
            before=query.before,
            limit=query.limit,
            order=query.order,
        )
        if page is None:
            raise _not_found(response_id)
        items = STORED_ITEMS.validate_json("[" + ",".join(r.body for r in page.data) + "]")
        return ListPage[StoredItem](
            data=items,
            first_id=page.data[0].id if page.data else None,
            last_id=page.data[-1].id if page.data else None,
            has_more=page.has_more,
        )


def _response(row: ResponseRow, output: Sequence[ItemRow]) -> Response:
    """A stored response with its output items (stored apart from the response's row)."""
    body = json_codec.loads(row.body)
    assert isinstance(body, dict), "a stored response's body is a JSON object"
    body["output"] = [json_codec.loads(item.body) for item in output]
    return Response.model_validate(body)


def _joins(response: Response) -> bool:
    """A response adds its input and output to its conversation when it completes (or stops
    short at a limit, with its output); a failed or cancelled one adds nothing."""
    return response.status in ("completed", "incomplete")


def _not_found(response_id: str) -> NotFoundError:
    return NotFoundError(f"Response with id '{response_id}' not found.", param="response_id")


def _no_trace(response_id: str, status: str) -> NotFoundError:
    """No trace for a stored response: it has not ended yet, or none was recorded."""
    if status in ("queued", "in_progress"):
        message = f"Response '{response_id}' is {status}: its trace is stored when it ends."
        return NotFoundError(message, param="response_id", code="trace_not_ready")
    message = (
        f"No trace was recorded for response '{response_id}' (stored before traces were kept, "
        "or not run by agentloom's agent loop)."
    )
    return NotFoundError(message, param="response_id", code="trace_not_found")


def _output(response: Response) -> list[StoredItem]:
    """The response's output items as they read back from storage."""
    return [_as_stored(item) for item in response.output]


def _as_stored(item: OutputItem) -> StoredItem:
    """An output item as it reads back from storage (the assistant message as a ``Message``,
    its parts shared: they are the same models)."""
    if isinstance(item, OutputMessage):
        return Message(id=item.id, role=item.role, content=[*item.content], status=item.status)
    return item


def _caller_error(failure: Failure, response: Response, *, stored: bool) -> AgentloomError:
    where = f" (response {response.id} is stored as failed)" if stored else ""
    if isinstance(failure, DatabaseUnavailableError):
        return DatabaseUnavailableError(failure.message + where)
    if isinstance(failure, ContextLengthExceededError) and not response.output:
        return InvalidRequestError(failure.message + where, param="input", code=failure.code)
    return type(failure)(
        failure.message + where,
        status=failure.status,
        code=failure.code,
        param=failure.param,
        retry_after=failure.retry_after,
    )
