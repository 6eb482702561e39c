"""The safety service: runs shields by id, concurrently, each under its timeout, and decides.

A shield that errors or times out blocks unless its ``on_error`` is ``"allow"`` (fail closed).
This is what guardrails, ``POST /v1/safety/run-shield`` and ``POST /v1/moderations`` call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Final, Literal

import anyio

from agentloom.errors import InvalidRequestError, NotFoundError, UpstreamError
from agentloom.frozen import frozen
from agentloom.safety.base import Role, Shield, Verdict
from agentloom.timeline import Attributes, Timeline
from agentloom.tracing import active

log = logging.getLogger(__name__)

REFUSAL: Final = "I'm sorry, but I can't help with that."
CHECK_FAILED: Final = "I'm sorry, but I can't answer right now: a safety check could not run."

OnError = Literal["block", "allow"]


@frozen
class GuardedShield:
    """A shield with how long it may take and what its failure means."""

    shield: Shield
    timeout: float
    on_error: OnError = "block"


@frozen
class Decision:
    """What the shields said about one text. ``failed``: a shield that blocks on error could
    not run. ``message`` is the refusal to show when ``blocked`` (else empty)."""

    blocked: bool
    verdicts: tuple[Verdict, ...]
    categories: tuple[str, ...]
    failed: bool
    message: str


ALLOWED: Final = Decision(blocked=False, verdicts=(), categories=(), failed=False, message="")


class SafetyService:
    def __init__(
        self,
        shields: Sequence[GuardedShield],
        *,
        default_guardrails: Sequence[str] = (),
        moderation_shield: str | None = None,
        on_verdict: Callable[[str, str], None] | None = None,
    ) -> None:
        """``on_verdict(shield_id, verdict)``: told of every verdict (``allowed``,
        ``flagged``, ``error``), e.g. to count them."""
        self._on_verdict = on_verdict
        if not shields:
            raise ValueError("a safety service needs at least one shield")
        self._shields = {guarded.shield.id: guarded for guarded in shields}
        self.default_guardrails = self.require(default_guardrails, "default_guardrails")
        self.moderation_shield = moderation_shield or shields[0].shield.id
        self.require([self.moderation_shield], "moderation_shield")

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._shields)

    def shields(self) -> list[GuardedShield]:
        return list(self._shields.values())

    def get(self, shield_id: str) -> GuardedShield:
        """The shield ``shield_id``; a ``NotFoundError`` when there is none."""
        guarded = self._shields.get(shield_id)
        if guarded is None:
            raise NotFoundError(
                f"No shield found with id '{shield_id}'.",
                param="shield_id",
                code="shield_not_found",
            )
        return guarded

    def require(self, ids: Sequence[str], param: str) -> tuple[str, ...]:
        """``ids`` without repeats, once each is known; else an ``InvalidRequestError`` naming
        ``param[i]`` and the first unknown id."""
        for index, shield_id in enumerate(ids):
            self.require_one(shield_id, f"{param}[{index}]")
        return tuple(dict.fromkeys(ids))

    def require_one(self, shield_id: str, param: str) -> str:
        """``shield_id`` once it is known; else an ``InvalidRequestError`` naming ``param``."""
        if shield_id not in self._shields:
            raise InvalidRequestError(
                f"Unknown shield '{shield_id}' in '{param}'. Known shields: "
                f"{', '.join(self._shields)}.",
                param=param,
                code="invalid_shield",
            )
        return shield_id

    def guardrails(
        self, requested: Sequence[str] | None, param: str = "guardrails"
    ) -> tuple[str, ...]:
        """The shields a response runs: the defaults, then those ``requested`` (checked)."""
        return tuple(
            dict.fromkeys([*self.default_guardrails, *self.require(requested or (), param)])
        )

    async def check(
        self, ids: Sequence[str], text: str, role: Role, timeline: Timeline | None = None
    ) -> Decision:
        """Run the shields ``ids`` (known: see :meth:`require`) on ``text`` said by ``role``;
        each shield's check an entry of ``timeline`` (a response's)."""
        guarded = [self.get(shield_id) for shield_id in dict.fromkeys(ids)]
        if not guarded or not text.strip():
            return ALLOWED
        if len(guarded) == 1:
            verdicts = [await _run(guarded[0], text, role, timeline)]
        else:
            verdicts = await _run_all(guarded, text, role, timeline)
        if self._on_verdict is not None:
            for verdict in verdicts:
                self._on_verdict(verdict.shield_id, verdict_name(verdict))
        return _decide(guarded, verdicts)

    async def check_all(
        self,
        ids: Sequence[str],
        texts: Sequence[tuple[str, Role]],
        timeline: Timeline | None = None,
    ) -> list[Decision]:
        """:meth:`check` of each ``(text, role)``, concurrently; decisions in the same order."""
        decisions: list[Decision] = [ALLOWED] * len(texts)

        async def run(index: int) -> None:
            text, role = texts[index]
            decisions[index] = await self.check(ids, text, role, timeline)

        async with anyio.create_task_group() as tasks:
            for index in range(len(texts)):
                tasks.start_soon(run, index)
        return decisions

    async def aclose(self) -> None:
        for guarded in self._shields.values():
            await guarded.shield.aclose()


async def _run_all(
    guarded: Sequence[GuardedShield], text: str, role: Role, timeline: Timeline | None
) -> list[Verdict]:
    verdicts: list[Verdict | None] = [None] * len(guarded)

    async def run(index: int) -> None:
        verdicts[index] = await _run(guarded[index], text, role, timeline)

    async with anyio.create_task_group() as tasks:
        for index in range(len(guarded)):
            tasks.start_soon(run, index)
    return [v for v in verdicts if v is not None]


async def _run(guarded: GuardedShield, text: str, role: Role, timeline: Timeline | None) -> Verdict:
    """One shield's check: its span (with tracing on), its entry in ``timeline``."""
    if timeline is None:
        return await _traced(guarded, text, role)
    started = time.perf_counter()
    verdict = await _traced(guarded, text, role)
    name = verdict_name(verdict)
    attributes: Attributes = {"shield": guarded.shield.id, "role": role, "verdict": name}
    if verdict.violations:
        attributes["categories"] = ",".join(verdict.categories)
    error = "shield_error" if name == "error" else None
    timeline.add(f"guardrail {guarded.shield.id}", "guardrail", started, attributes, error)
    return verdict


async def _traced(guarded: GuardedShield, text: str, role: Role) -> Verdict:
    tracing = active()
    if tracing is None:
        return await _checked(guarded, text, role)
    shield_id = guarded.shield.id
    with tracing.leaf(f"guardrail {shield_id}", {"agentloom.guardrail.shield": shield_id}) as span:
        verdict = await _checked(guarded, text, role)
        span.set_attributes(
            {
                "agentloom.guardrail.role": role,
                "agentloom.guardrail.verdict": verdict_name(verdict),
                "agentloom.guardrail.categories": list(verdict.categories),
            }
        )
        return verdict


def verdict_name(verdict: Verdict) -> str:
    """``flagged``, ``error`` (the shield could not run) or ``allowed``."""
    return "flagged" if verdict.flagged else "error" if verdict.error is not None else "allowed"


async def _checked(guarded: GuardedShield, text: str, role: Role) -> Verdict:
    shield_id = guarded.shield.id
    try:
        with anyio.fail_after(guarded.timeout):
            return await guarded.shield.check(text, role=role)
    except TimeoutError:
        error = f"the shield '{shield_id}' did not answer within {guarded.timeout:g} s"
    except UpstreamError as exc:
        error = f"the shield '{shield_id}' could not run: {exc.message}"
    log.warning("%s (on_error=%s)", error, guarded.on_error)
    return Verdict(shield_id, error=error)


def combine(decisions: Sequence[Decision]) -> Decision:
    """One decision for several texts: blocked when any is, its message the strongest."""
    verdicts = tuple(v for d in decisions for v in d.verdicts)
    categories = tuple(dict.fromkeys(c for d in decisions for c in d.categories))
    flagged = any(v.flagged for v in verdicts)
    failed = any(d.failed for d in decisions)
    message = REFUSAL if flagged else CHECK_FAILED if failed else ""
    return Decision(flagged or failed, verdicts, categories, failed, message)


def _decide(guarded: Sequence[GuardedShield], verdicts: Sequence[Verdict]) -> Decision:
    blocks_on_error = {g.shield.id for g in guarded if g.on_error == "block"}
    failed = any(v.error is not None and v.shield_id in blocks_on_error for v in verdicts)
    categories = tuple(dict.fromkeys(c for v in verdicts for c in v.categories))
    flagged = any(v.flagged for v in verdicts)
    blocked = flagged or failed
    message = REFUSAL if flagged else CHECK_FAILED if failed else ""
    return Decision(blocked, tuple(verdicts), categories, failed, message)
