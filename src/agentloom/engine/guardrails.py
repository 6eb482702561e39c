"""Guardrails on a response: shields on its input, its streamed output and its server tools.

:class:`Guardrails` turns a request's ``guardrails`` (after the server's defaults) and
``moderation`` into a :class:`GuardPlan` before anything runs (unknown shields are a 400). The
agent loop runs a :class:`Guard` from the plan:

- the request's new input is checked (as ``user``) before the first model call;
- each model call's output goes through an :class:`~agentloom.engine.output_guard.OutputGuard`;
- a server tool's arguments are checked (``assistant``) before it runs and its output (``tool``)
  before the model sees it; a blocked output is redacted in the item the response shows;
- ``moderation`` results are filled in at the end (``score``: reported only; ``block``: the
  moderation shield also guards, like a guardrail).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final

import anyio

from agentloom.api.items import (
    CustomToolCallOutput,
    FunctionCallOutput,
    McpApprovalRequest,
    McpCall,
    McpCallError,
    Message,
    OutputItem,
    StoredItem,
)
from agentloom.api.requests import CreateResponseRequest, ModerationParam, ModerationPolicy
from agentloom.api.response import (
    ModerationFailure,
    ModerationOutcome,
    ModerationResult,
    Response,
    ResponseModeration,
)
from agentloom.api.shell_items import ShellKindOutput
from agentloom.engine.output_guard import OutputGuard, StreamWindow
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.safety.base import Role, Verdict
from agentloom.safety.categories import moderation_scores
from agentloom.safety.service import ALLOWED, Decision, SafetyService, combine
from agentloom.timeline import Timeline
from agentloom.tools.base import ToolResult
from agentloom.tools.server_tools import TOOL_ITEMS

__all__ = [
    "BLOCKED_CALL",
    "BLOCKED_OUTPUT",
    "Guard",
    "GuardPlan",
    "Guardrails",
    "ModerationPlan",
    "StreamWindow",
    "blocked_call_item",
    "input_text",
    "redacted",
    "refusal_chunks",
]

# OpenAI's moderation model names (``omni-moderation-latest`` ...) mean the moderation shield.
OPENAI_MODERATION_PREFIXES: Final = ("omni-moderation-", "text-moderation-")
BLOCKED_CALL: Final = "Error: this tool call was blocked by a guardrail; it did not run."
BLOCKED_OUTPUT: Final = "[withheld: the tool's output was blocked by a guardrail]"
_CHECKED_ROLES: Final = frozenset({"user", "assistant"})  # not the developer's own messages


@frozen
class ModerationPlan:
    shield: str
    block_input: bool
    block_output: bool


@frozen
class GuardPlan:
    """The shields one response runs: ``shields`` (the guardrails) and ``moderation``;
    ``input_text`` is the request's new input."""

    safety: SafetyService
    shields: tuple[str, ...]
    moderation: ModerationPlan | None
    window: StreamWindow
    input_text: str = ""

    def with_input(self, text: str) -> GuardPlan:
        return dataclasses.replace(self, input_text=text)

    def input_shields(self) -> tuple[str, ...]:
        """What guards input and tool output: the guardrails, and a blocking moderation."""
        blocking = self.moderation is not None and self.moderation.block_input
        return self._with_moderation(blocking)

    def output_shields(self) -> tuple[str, ...]:
        """What guards the model's output and tool arguments."""
        blocking = self.moderation is not None and self.moderation.block_output
        return self._with_moderation(blocking)

    def _with_moderation(self, blocking: bool) -> tuple[str, ...]:
        if not blocking or self.moderation is None:
            return self.shields
        return tuple(dict.fromkeys([*self.shields, self.moderation.shield]))


class Guardrails:
    """The server's guardrails: the safety service and how streamed output is checked."""

    def __init__(self, safety: SafetyService, window: StreamWindow | None = None) -> None:
        self.safety = safety
        self.window = window or StreamWindow()

    def plan(self, request: CreateResponseRequest) -> GuardPlan | None:
        """The shields ``request`` runs (``None``: none); unknown ids are a 400."""
        requested = [
            self.safety.require_one(shield, param) for shield, param in request.requested_shields()
        ]
        shields = self.safety.guardrails(requested)
        moderation = self._moderation(request.moderation)
        if not shields and moderation is None:
            return None
        return GuardPlan(self.safety, shields, moderation, self.window)

    def _moderation(self, param: ModerationParam | None) -> ModerationPlan | None:
        if param is None:
            return None
        model = param.model
        if model.startswith(OPENAI_MODERATION_PREFIXES):
            shield = self.safety.moderation_shield
        else:
            shield = self.safety.require_one(model, "moderation.model")
        policy = param.policy or ModerationPolicy()
        return ModerationPlan(
            shield,
            block_input=policy.input is not None and policy.input.mode == "block",
            block_output=policy.output is not None and policy.output.mode == "block",
        )


def unavailable(request: CreateResponseRequest) -> None:
    """Refuse guardrails on a server built without them."""
    if request.guardrails:
        raise InvalidRequestError(
            "Guardrails are not available on this server.", param="guardrails"
        )
    if request.moderation is not None:
        raise InvalidRequestError(
            "Moderation is not available on this server.", param="moderation.model"
        )


async def refusal_chunks(message: str) -> AsyncIterator[inf.Chunk]:
    """A model call's worth of chunks that only refuse."""
    yield inf.RefusalDelta(message)
    yield inf.Finish("stop")


def input_text(items: Sequence[StoredItem]) -> str:
    """The text of a request's new input: user and assistant messages, function outputs."""
    texts: list[str] = []
    for item in items:
        if isinstance(item, Message) and item.role in _CHECKED_ROLES:
            texts.append(item.text())
        elif isinstance(item, FunctionCallOutput | CustomToolCallOutput | ShellKindOutput):
            texts.append(item.output_text())
    return "\n\n".join(text for text in texts if text)


class Guard:
    """A plan at work in one response; keeps what the moderation shield said. Each shield's
    check is an entry of the response's ``timeline``."""

    def __init__(self, plan: GuardPlan, timeline: Timeline | None = None) -> None:
        self.plan = plan
        self.timeline = timeline
        self.refused = False  # the input or a model call's output was blocked: a refusal
        self._input_verdicts: list[Verdict] = []
        self._output_verdicts: list[Verdict] = []

    async def check_input(self) -> Decision:
        """The new input, before the model is called (and scored when moderation scores)."""
        guarding = self.plan.input_shields()
        checks = [(guarding, self.plan.input_text), (self._scoring(guarding), self.plan.input_text)]
        decisions = await _concurrently(self.plan.safety, checks, "user", self.timeline)
        self._keep(decisions, self._input_verdicts)
        self.refused = decisions[0].blocked
        return decisions[0]

    def output(
        self, chunks: AsyncIterator[inf.Chunk], hosted: frozenset[str], on_block: Callable[[], None]
    ) -> AsyncIterator[inf.Chunk]:
        """One model call's chunks, guarded (``hosted``: server tools, whose calls are checked
        when they run). On a violation ``on_block`` is called and :attr:`refused` set."""

        def blocked() -> None:
            self.refused = True
            on_block()

        guard = OutputGuard(self._check_output, self.plan.window, hosted=hosted, on_block=blocked)
        return guard.run(chunks)

    async def blocks_call(self, arguments: str) -> bool:
        """Whether a server tool's call must not run."""
        shields = self.plan.output_shields()
        decision = await self.plan.safety.check(shields, arguments, "assistant", self.timeline)
        return decision.blocked

    async def screen(self, result: ToolResult) -> ToolResult:
        """A server tool's result, its output redacted when blocked."""
        if result.awaits_client:
            return result
        shields = self.plan.input_shields()
        decision = await self.plan.safety.check(shields, result.output, "tool", self.timeline)
        if not decision.blocked:
            return result
        return ToolResult(item=redacted(result.item), output=BLOCKED_OUTPUT)

    async def report(self, response: Response) -> Response:
        """``response`` with its ``moderation`` results, when moderation was asked for: the
        output is what the streaming checks saw, or (scoring only) the final output text."""
        moderation = self.plan.moderation
        if moderation is None:
            return response
        scoring = self._scoring(self.plan.output_shields())
        if scoring:
            text = response.output_text()
            decision = await self.plan.safety.check(scoring, text, "assistant", self.timeline)
            self._output_verdicts += decision.verdicts
        results = ResponseModeration(
            input=_outcome(moderation.shield, self._input_verdicts),
            output=_outcome(moderation.shield, self._output_verdicts),
        )
        return response.model_copy(update={"moderation": results})

    async def _check_output(self, texts: Sequence[tuple[str, Role]]) -> Decision:
        shields = self.plan.output_shields()
        decisions = await self.plan.safety.check_all(shields, texts, self.timeline)
        self._keep(decisions, self._output_verdicts)
        return combine(decisions)

    def _scoring(self, guarding: tuple[str, ...]) -> tuple[str, ...]:
        """The moderation shield, when it must run apart from the shields ``guarding``."""
        moderation = self.plan.moderation
        if moderation is None or moderation.shield in guarding:
            return ()
        return (moderation.shield,)

    def _keep(self, decisions: Sequence[Decision], kept: list[Verdict]) -> None:
        if self.plan.moderation is None:
            return
        shield = self.plan.moderation.shield
        kept += [v for d in decisions for v in d.verdicts if v.shield_id == shield]


async def _concurrently(
    safety: SafetyService,
    checks: Sequence[tuple[tuple[str, ...], str]],
    role: Role,
    timeline: Timeline | None,
) -> list[Decision]:
    """``safety.check`` of each ``(ids, text)`` at once; the decisions in the same order."""
    decisions: list[Decision] = [ALLOWED] * len(checks)

    async def run(index: int) -> None:
        ids, text = checks[index]
        decisions[index] = await safety.check(ids, text, role, timeline)

    async with anyio.create_task_group() as tasks:
        for index, (ids, _) in enumerate(checks):
            if ids:
                tasks.start_soon(run, index)
    return decisions


def _outcome(shield: str, verdicts: Sequence[Verdict]) -> ModerationOutcome:
    error = next((v.error for v in verdicts if v.error is not None), None)
    if error is not None:
        return ModerationFailure(code="moderation_failed", message=error)
    scores, flagged = moderation_scores(v for verdict in verdicts for v in verdict.violations)
    return ModerationResult(
        model=shield,
        flagged=bool(flagged),
        categories={key: key in flagged for key in scores},
        category_scores=scores,
        category_applied_input_types={key: ["text"] for key in scores},
    )


# --- server tools ------------------------------------------------------------------------------


def blocked_call_item(item: OutputItem) -> OutputItem:
    """The item of a server tool call a guardrail stopped: ``failed`` (an approval request
    becomes the failed ``mcp_call``: nobody is asked to approve a blocked call)."""
    if isinstance(item, McpApprovalRequest):
        item = McpCall(
            id=item.id, server_label=item.server_label, name=item.name, arguments=item.arguments
        )
    if isinstance(item, McpCall):
        error = McpCallError.execution(BLOCKED_CALL)
        return item.model_copy(update={"status": "failed", "error": error})
    if "status" in type(item).model_fields:
        return item.model_copy(update={"status": "failed"})
    return item


def _redact_mcp(item: McpCall) -> McpCall:
    error = item.error.redacted(BLOCKED_OUTPUT) if item.error is not None else None
    return item.model_copy(update={"output": BLOCKED_OUTPUT, "error": error})


def redacted(item: OutputItem) -> OutputItem:
    """``item`` without the tool output a guardrail blocked."""
    if (tool := TOOL_ITEMS.get(item.type)) is not None:
        redacted_item: OutputItem = tool.redacted(item, BLOCKED_OUTPUT)
        return redacted_item
    return _redact_mcp(item) if isinstance(item, McpCall) else item
