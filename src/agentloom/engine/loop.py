"""The agent loop: a sequence of named steps, streaming typed events.

    assemble input -> call model -> emit output -> run server-side tools -> decide
        (continue with another model call | hand function calls back | finish)

The loop is an async iterator of :mod:`agentloom.api.events`; the non-streaming reply is the
collected stream. When it ends, :attr:`AgentLoop.response` holds the final Response.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AsyncExitStack
from typing import Literal, Protocol, TypeAlias

from agentloom.api import events as ev
from agentloom.api.items import OutputItem, StoredItem
from agentloom.api.response import (
    IncompleteDetails,
    IncompleteReason,
    Response,
    ResponseError,
)
from agentloom.engine import spans, truncation
from agentloom.engine.citations import Citations
from agentloom.engine.client_tools import chat_call
from agentloom.engine.compaction import Compactions, turn_start
from agentloom.engine.context import Context
from agentloom.engine.guardrails import (
    BLOCKED_CALL,
    Guard,
    GuardPlan,
    blocked_call_item,
    refusal_chunks,
)
from agentloom.engine.messages import Head, Summary
from agentloom.engine.reasoning import ReasoningOutput
from agentloom.engine.tool_plan import ToolPlan
from agentloom.engine.turn import Sequencer, TurnResult, TurnStreamer
from agentloom.engine.usage import UsageTally
from agentloom.errors import (
    ContextLengthExceededError,
    DatabaseUnavailableError,
    UpstreamError,
    UpstreamTimeoutError,
)
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.inference import base as inf
from agentloom.inference.deadlines import Deadline, Which
from agentloom.timeline import Timeline
from agentloom.tools.base import Listed, ToolCallContext, ToolResult, Toolset, ToolsetContext
from agentloom.tools.mcp.approvals import approved_calls

# What fails a response: the backend, or the database lost under it (a tool's reads, say).
Failure: TypeAlias = UpstreamError | DatabaseUnavailableError


@frozen
class CompactionPlan:
    """``context_management`` compaction: above ``threshold`` estimated input tokens, the
    items of ``context`` before the current turn are summarised first."""

    threshold: int
    context: Context  # everything the model would see, the new input included
    head: Head
    compactions: Compactions


@frozen
class Budget:
    """How long a response may run, and the setting that says so (named when it runs out)."""

    seconds: float
    setting: str = "[limits] response_timeout"

    def spent(self, _: Which, seconds: float) -> UpstreamTimeoutError:
        return UpstreamTimeoutError(
            f"the response did not finish within {seconds:g} s ({self.setting})"
        )


@frozen
class LoopConfig:
    provider: inf.Provider
    request: inf.ChatRequest  # messages + sampling params of the first model call
    tools: ToolPlan
    max_output_tokens: int | None
    max_model_calls: int
    truncation: Literal["auto", "disabled"]
    truncation_retries: int
    context_window: int | None
    include_logprobs: bool
    compaction: CompactionPlan | None = None
    max_tool_calls: int | None = None  # calls of server tools in the whole response
    earlier: Sequence[StoredItem] = ()  # the items the model sees (earlier listings, approvals)
    guards: GuardPlan | None = None  # guardrails and moderation
    reasoning: ReasoningOutput | None = None  # sealed / summarised reasoning items
    provider_name: str = ""  # the configured provider's name (what traces call it)
    budget: Budget | None = None  # how long the whole run may take


class LoopObserver(Protocol):
    """Told of each model call's and each server tool call's end (the metrics)."""

    def model_called(self, provider: str, model: str, seconds: float, ok: bool) -> None: ...

    def tool_called(self, tool: str, outcome: str, seconds: float) -> None: ...


@frozen
class _Decision:
    kind: Literal["finish", "continue", "incomplete", "run_tools"]
    reason: IncompleteReason | None = None
    messages: tuple[inf.ChatMessage, ...] = ()


class AgentLoop:
    def __init__(
        self,
        response: Response,
        config: LoopConfig,
        *,
        collected: bool = False,
        observer: LoopObserver | None = None,
    ) -> None:
        """``collected``: only the terminal event's response is used (no one sees deltas).
        ``observer``: told of each model call's and server tool call's end."""
        self._observer = observer
        self.response = response
        self._config = config
        self._collected = collected
        self._seq = Sequencer()
        self._messages = list(config.request.messages)
        self._usage = UsageTally()
        self._output_tokens = 0
        self._turn: TurnStreamer | None = None  # the model call under way, not yet recorded
        self._tools = config.tools
        self._tool_calls = 0  # server tool calls run so far
        self._running: OutputItem | None = None  # the server tool call under way, as announced
        self._citations = Citations()
        self._stack = AsyncExitStack()  # connections of toolsets, closed when the run ends
        self._awaiting = False  # a tool call waits for the client (an approval request)
        self.failure: Failure | None = None  # why the response failed, if it did
        self.model_calls = 0  # model calls made so far
        self.timeline = Timeline()  # the run's own trace, stored with the response
        self.started = self.timeline.started  # when the run was set up
        # when the first text, refusal, reasoning or arguments came (a collected run, whose
        # delta events are not made, tells its first token by this)
        self.first_output: float | None = None
        self._guard = None if config.guards is None else Guard(config.guards, self.timeline)

    async def run(self) -> AsyncGenerator[ev.StreamEvent, None]:
        if not self._collected:  # a collected run's consumer uses its terminal event alone
            yield ev.ResponseCreated(sequence_number=self._seq(), response=self.response)
            yield ev.ResponseInProgress(sequence_number=self._seq(), response=self.response)
        async with self._stack:  # errors are caught inside: none crosses the sessions' tasks
            try:
                # The steps under the response budget: one timer, counting only while they run
                # (not while the consumer holds an event), no generator of its own.
                deadline, steps = self._deadline(), self._steps()
                try:
                    deadline.waiting()
                    async for event in steps:
                        deadline.done()
                        yield event
                        deadline.waiting()
                except asyncio.CancelledError:
                    if deadline.expired():
                        raise self._budget_spent() from None
                    raise
                finally:
                    deadline.close()
                    await steps.aclose()  # in this task: the toolsets' sessions close here
            except (UpstreamError, DatabaseUnavailableError) as exc:
                for event in self._interrupt():
                    yield event
                self.failure = exc
                self._end_failed(exc)
        if self._guard is not None:
            self.response = await self._guard.report(self.response)
        yield self._terminal_event()

    def _deadline(self) -> Deadline:
        """The response budget's: whatever the run waits on past it (a model, a tool's
        server), the response ends ``failed``."""
        budget = self._config.budget
        return Deadline(None if budget is None else budget.seconds)

    def _budget_spent(self) -> UpstreamTimeoutError:
        budget = self._config.budget
        assert budget is not None, "only a budget's deadline expires"
        return budget.spent("total_timeout", budget.seconds)

    # --- steps -------------------------------------------------------------------------------

    async def _steps(self) -> AsyncGenerator[ev.StreamEvent, None]:
        if self._guard is None and self._config.compaction is None and not self._tools.toolsets:
            self._assemble()  # nothing else comes before the model (most requests)
        else:
            async for event in self._before_model():
                yield event
        if self._refused:
            self._end_completed()  # the input was blocked: a refusal, the model not called
            return
        for _ in range(self._config.max_model_calls):
            budget = self._remaining_budget()
            if budget is not None and budget <= 0:
                self._end_incomplete("max_output_tokens")
                return
            turn = TurnStreamer(
                self._seq,
                first_output_index=len(self.response.output),
                policy=self._tools.policy,
                include_logprobs=self._config.include_logprobs,
                annotate=self._citations.annotate if self._citations.sources else None,
                reasoning=self._config.reasoning,
                quiet=self._collected,
            )
            self._turn = turn
            self.model_calls += 1
            call = spans.ModelCall(self.response.model, self._config.provider_name, self.timeline)
            try:
                async for event in self._call_model(turn, budget, call):
                    yield event
            except UpstreamError as exc:
                self._told(call, turn.result, exc)
                raise
            self._told(call, turn.result)
            self._record(turn.result)
            self._turn = None
            if self._refused:
                self._end_completed()  # the output was blocked: a refusal ends the response
                return
            decision = self._decide(turn.result)
            if decision.kind == "run_tools":
                self._messages.extend(decision.messages)
                async for event in self._run_server_tools(turn.result.hosted):
                    yield event
                if self._awaiting:
                    decision = _Decision("finish")  # approval requests go to the client
                elif not turn.result.calls:
                    continue
                decision = _Decision("finish")  # the client's function calls are handed back
            if decision.kind == "continue":
                self._messages.extend(decision.messages)
                continue
            if decision.kind == "incomplete":
                assert decision.reason is not None
                self._end_incomplete(decision.reason)
            else:
                self._end_completed()
            return
        self._end_incomplete("max_messages")

    async def _before_model(self) -> AsyncIterator[ev.StreamEvent]:
        """Guard the input, compact and fit it, open the toolsets, run approved calls (each
        step only when the request has something for it: most have none)."""
        if self._guard is not None:
            async for event in self._check_input():
                yield event
            if self._refused:
                return
        if self._config.compaction is not None:
            async for event in self._compact():
                yield event
        self._assemble()
        if self._tools.toolsets:
            async for event in self._open_toolsets():
                yield event
            async for event in self._run_approved():
                yield event

    @property
    def _refused(self) -> bool:
        """A guardrail blocked the input or a model call's output."""
        return self._guard is not None and self._guard.refused

    async def _check_input(self) -> AsyncIterator[ev.StreamEvent]:
        """Guardrails on the request's new input: blocked, the answer is a refusal."""
        if self._guard is None:
            return
        decision = await self._guard.check_input()
        if not decision.blocked:
            return
        output = self.response.output
        turn = TurnStreamer(self._seq, first_output_index=len(output), policy=self._tools.policy)
        async for event in turn.run(refusal_chunks(decision.message)):
            yield event
        self.response = self.response.model_copy(update={"output": [*output, *turn.result.items]})

    async def _open_toolsets(self) -> AsyncIterator[ev.StreamEvent]:
        """List the tools of each toolset (``mcp``: ``tools/list``, or an earlier listing
        reused) and offer them to the model."""
        for toolset in self._tools.toolsets:
            async for event in self._open_toolset(toolset):
                yield event

    async def _open_toolset(self, toolset: Toolset) -> AsyncIterator[ev.StreamEvent]:
        context = ToolsetContext(
            item_id=new_id("mcpl"),
            output_index=len(self.response.output),
            seq=self._seq,
            earlier=self._config.earlier,
            stack=self._stack,
        )
        async for step in toolset.open(context):
            if not isinstance(step, Listed):
                yield step
                continue
            if step.item is not None:
                output = [*self.response.output, step.item]
                self.response = self.response.model_copy(update={"output": output})
            self._tools = self._tools.with_listed(step)

    async def _run_approved(self) -> AsyncIterator[ev.StreamEvent]:
        """Run the calls the client approved (``mcp_approval_response``) before the model
        goes on; denied ones are told to the model by the history."""
        if not self._tools.toolsets:
            return  # no toolset here: nothing can have been approved (skip the history scan)
        for approved in approved_calls(self._config.earlier, self._tools.server):
            call = inf.ToolCall(
                id=new_id("call"), name=approved.function, arguments=approved.arguments
            )
            self._messages.append(inf.ChatMessage(role="assistant", tool_calls=(call,)))
            self._tool_calls += 1
            async for event in self._run_server_tool(call, approved.request_id):
                yield event

    async def _compact(self) -> AsyncIterator[ev.StreamEvent]:
        """Summarise what comes before the current turn when the input is over the threshold
        (``context_management``); the summary becomes the first output item."""
        plan = self._config.compaction
        if plan is None or truncation.estimate_tokens(self._messages) <= plan.threshold:
            return
        items = plan.context.items
        start = turn_start(items, plan.compactions.read)
        if start == 0:
            return  # nothing before the current turn
        item_id, index = new_id("cmp"), len(self.response.output)
        yield ev.CompactionCompacting(
            sequence_number=self._seq(), item_id=item_id, output_index=index
        )
        model, started = self._config.request.model, time.perf_counter()
        done = await plan.compactions.summarize(self._config.provider, model, items[:start])
        spans.compacted(self.timeline, started, model, done.usage)
        through = items[start - 1].id
        item = plan.compactions.item(Summary(done.text, through)).model_copy(update={"id": item_id})
        self._messages = plan.context.extended([item]).chat.render(plan.head)
        self.response = self.response.model_copy(update={"output": [*self.response.output, item]})
        if done.usage is not None:
            self._usage.add(done.usage)
        yield ev.OutputItemAdded(sequence_number=self._seq(), output_index=index, item=item)
        yield ev.OutputItemDone(sequence_number=self._seq(), output_index=index, item=item)

    def _assemble(self) -> None:
        """Fit the input into the model's context window when truncation is ``auto``."""
        window = self._config.context_window
        if self._config.truncation != "auto" or window is None:
            return
        reserve = self._config.max_output_tokens or 0
        fitted = truncation.fit_to_window(self._messages, window, reserve)
        if fitted is not None:
            self._messages = fitted

    def elapsed(self) -> float:
        """Seconds since the run was set up."""
        return time.perf_counter() - self.started

    def _told(
        self, call: spans.ModelCall, result: TurnResult, error: UpstreamError | None = None
    ) -> None:
        """A model call ended: its time to the observer, its span recorded."""
        if self._observer is not None:
            seconds = time.perf_counter() - call.started
            self._observer.model_called(call.provider, call.model, seconds, error is None)
        call.record(result, error)

    async def _call_model(
        self, turn: TurnStreamer, budget: int | None, call: spans.ModelCall
    ) -> AsyncIterator[ev.StreamEvent]:
        retries = self._config.truncation_retries
        while True:
            request = self._chat_request(budget)
            started = False
            try:
                chunks = self._config.provider.stream(request)
                if self._guard is not None:
                    hosted = self._tools.policy.hosted
                    chunks = self._guard.output(chunks, hosted, turn.keep_refusal_only)
                # the turn's events made here, not by a generator of its own (one level less
                # for each of them)
                async for chunk in chunks:
                    events = turn.on_chunk(chunk)
                    if not started and turn.opened:  # the call's first event (or item)
                        started, call.first_output = True, time.perf_counter()
                    if self.first_output is None and turn.first_delta:
                        self.first_output = time.perf_counter()
                    for event in events:
                        yield event
                for event in turn.close():
                    yield event
                return
            except ContextLengthExceededError:
                if started or not self._truncate_after_overflow(retries):
                    raise
                retries -= 1

    def _truncate_after_overflow(self, retries: int) -> bool:
        if self._config.truncation != "auto" or retries <= 0:
            return False
        shorter = truncation.drop_oldest_turn(self._messages)
        if shorter is None:
            return False
        self._messages = shorter
        return True

    def _chat_request(self, budget: int | None) -> inf.ChatRequest:
        request = self._config.request.calling(tuple(self._messages), budget, self._collected)
        if self._tools is self._config.tools:
            return request
        tools = self._tools  # server tools withdrawn (max_tool_calls)
        return dataclasses.replace(
            request,
            tools=tools.specs,
            tool_choice=tools.choice,
            parallel_tool_calls=request.parallel_tool_calls if tools.specs else None,
        )

    def _decide(self, result: TurnResult) -> _Decision:
        if result.finish == "length":
            return _Decision("incomplete", reason="max_output_tokens")
        if result.finish == "content_filter":
            return _Decision("incomplete", reason="content_filter")
        if result.hosted:
            return _Decision("run_tools", messages=_rejection_messages(result))
        if result.rejected and not result.calls:
            return _Decision("continue", messages=_rejection_messages(result))
        policy = self._tools.policy
        if policy.required and not result.calls and self._tools.specs:
            return _Decision("continue", messages=(_must_call(policy.offered),))
        return _Decision("finish")  # function calls, if any, go to the client

    async def _run_server_tools(self, calls: list[inf.ToolCall]) -> AsyncIterator[ev.StreamEvent]:
        """Run the model's calls of server tools in order; each result is told to the model."""
        limit = self._config.max_tool_calls
        for call in calls:
            if limit is not None and self._tool_calls >= limit:
                self._messages.append(_over_limit(call))
                continue
            self._tool_calls += 1
            async for event in self._run_server_tool(call):
                yield event
        self._tools = self._tools.relaxed()
        if limit is not None and self._tool_calls >= limit:
            self._tools = self._tools.without_server_tools()

    def _run_server_tool(
        self, call: inf.ToolCall, approval_request_id: str | None = None
    ) -> AsyncIterator[ev.StreamEvent]:
        kind = self._tools.server[call.name].kind
        running = self._server_tool(call, approval_request_id)
        return spans.tool_call(running, call.name, kind, call.id, self.timeline)

    async def _server_tool(
        self, call: inf.ToolCall, approval_request_id: str | None
    ) -> AsyncGenerator[ev.StreamEvent, None]:
        tool, started = self._tools.server[call.name], time.perf_counter()
        context = ToolCallContext(
            item_id=new_id(tool.item_prefix),
            output_index=len(self.response.output),
            seq=self._seq,
            first_source=self._citations.next_number,
            approval_request_id=approval_request_id,
        )
        if self._guard is not None and await self._guard.blocks_call(call.arguments):
            item = blocked_call_item(tool.item(context, call.arguments))
            self._tool_told(tool.kind, "blocked", started)
            for event in self._tool_done(call, ToolResult(item, BLOCKED_CALL), context, item):
                yield event
            return
        self._running = tool.item(context, call.arguments)
        yield ev.OutputItemAdded(
            sequence_number=self._seq(), output_index=context.output_index, item=self._running
        )
        result: ToolResult | None = None
        async for step in tool.run(context, call.arguments):
            if isinstance(step, ToolResult):
                result = step
            else:
                yield step
        assert result is not None, f"server tool {tool.kind} ended without a result"
        if self._guard is not None:
            result = await self._guard.screen(result)
        self._running = None
        self._tool_told(tool.kind, spans.tool_outcome(result.item), started)
        for event in self._tool_done(call, result, context):
            yield event

    def _tool_told(self, kind: str, outcome: str, started: float) -> None:
        if self._observer is not None:
            self._observer.tool_called(kind, outcome, time.perf_counter() - started)

    def _tool_done(
        self,
        call: inf.ToolCall,
        result: ToolResult,
        context: ToolCallContext,
        announce: OutputItem | None = None,
    ) -> list[ev.StreamEvent]:
        """Record a server tool call's result: its item joins the output, the model is told.
        ``announce``: the item was not announced yet (``output_item.added``)."""
        self._awaiting = self._awaiting or result.awaits_client
        self.response = self.response.model_copy(
            update={"output": [*self.response.output, result.item]}
        )
        self._citations.add(result.sources)
        self._messages.append(
            inf.ChatMessage(role="tool", tool_call_id=call.id, content=result.output)
        )
        index = context.output_index
        events: list[ev.StreamEvent] = []
        if announce is not None:
            events.append(
                ev.OutputItemAdded(sequence_number=self._seq(), output_index=index, item=announce)
            )
        events.append(
            ev.OutputItemDone(sequence_number=self._seq(), output_index=index, item=result.item)
        )
        return events

    def abandoned(self) -> Response:
        """The response when its consumer went away mid-way: ``cancelled``, with the output
        produced so far."""
        if self.response.status != "in_progress":
            return self.response
        self._interrupt()
        return self.response.model_copy(update={"status": "cancelled"})

    def _interrupt(self) -> list[ev.StreamEvent]:
        """Close the items of an interrupted model call: they join the output ``incomplete``.
        Returns the closing events (``output_item.done`` ...) for a consumer still listening."""
        if self._running is not None:
            running, self._running = _interrupted(self._running), None
            self.response = self.response.model_copy(
                update={"output": [*self.response.output, running]}
            )
        if self._turn is None:
            return []
        items = self._turn.result.items
        finished = len(items)  # items closed before the interruption stay ``completed``
        events = [_interrupted_event(event) for event in self._turn.close()]
        partial = [*items[:finished], *(_interrupted(item) for item in items[finished:])]
        self._turn = None
        self.response = self.response.model_copy(
            update={"output": [*self.response.output, *partial]}
        )
        return events

    # --- bookkeeping -------------------------------------------------------------------------

    def _record(self, result: TurnResult) -> None:
        self.response = self.response.model_copy(
            update={"output": [*self.response.output, *result.items]}
        )
        self._messages.append(_assistant_message(result))
        usage = result.usage or _estimated_usage(self._messages, result)
        self._output_tokens += usage.output_tokens
        self._usage.add(usage)

    def _remaining_budget(self) -> int | None:
        if self._config.max_output_tokens is None:
            return None
        return self._config.max_output_tokens - self._output_tokens

    def _end_completed(self) -> None:
        self._finish("completed", completed_at=int(time.time()))

    def _end_incomplete(self, reason: IncompleteReason) -> None:
        self._finish("incomplete", incomplete_details=IncompleteDetails(reason=reason))

    def _end_failed(self, exc: Failure) -> None:
        error = ResponseError(code=exc.code or "server_error", message=exc.stated())
        self._finish("failed", error=error)

    def _finish(
        self, status: Literal["completed", "incomplete", "failed"], **fields: object
    ) -> None:
        self.response = self.response.model_copy(
            update={"status": status, "usage": self._usage.response_usage(), **fields}
        )

    def _terminal_event(self) -> ev.TerminalEvent:
        seq, response = self._seq(), self.response
        if response.status == "completed":
            return ev.ResponseCompleted(sequence_number=seq, response=response)
        if response.status == "incomplete":
            return ev.ResponseIncomplete(sequence_number=seq, response=response)
        return ev.ResponseFailed(sequence_number=seq, response=response)


def _assistant_message(result: TurnResult) -> inf.ChatMessage:
    text = "".join(
        part.text
        for item in result.items
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )
    calls = (
        tuple(chat_call(c) for c in result.calls) + tuple(result.hosted) + tuple(result.rejected)
    )
    return inf.ChatMessage(role="assistant", content=text or None, tool_calls=calls)


def _rejection_messages(result: TurnResult) -> tuple[inf.ChatMessage, ...]:
    return tuple(
        inf.ChatMessage(
            role="tool",
            tool_call_id=call.id,
            content=f"Error: tool '{call.name}' is not available. Use only the tools offered.",
        )
        for call in result.rejected
    )


def _over_limit(call: inf.ToolCall) -> inf.ChatMessage:
    return inf.ChatMessage(
        role="tool",
        tool_call_id=call.id,
        content="Error: the limit of tool calls for this response is reached; answer with "
        "what you have.",
    )


def _must_call(offered: frozenset[str]) -> inf.ChatMessage:
    """What the model is told when ``tool_choice`` requires a call and it answered without one
    (for backends that do not enforce ``tool_choice`` themselves)."""
    names = ", ".join(sorted(offered))
    return inf.ChatMessage(
        role="user",
        content=f"You must call one of these tools now: {names}. Reply with a tool call.",
    )


def _estimated_usage(messages: list[inf.ChatMessage], result: TurnResult) -> inf.Usage:
    output = max(1, result.output_chars // truncation.CHARS_PER_TOKEN)
    return inf.Usage(input_tokens=truncation.estimate_tokens(messages), output_tokens=output)


def _interrupted_event(event: ev.StreamEvent) -> ev.StreamEvent:
    if isinstance(event, ev.OutputItemDone):
        return event.model_copy(update={"item": _interrupted(event.item)})
    return event


def _interrupted(item: OutputItem) -> OutputItem:
    if "status" not in type(item).model_fields:
        return item
    return item.model_copy(update={"status": "incomplete"})
