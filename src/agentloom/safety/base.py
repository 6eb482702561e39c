"""The shield seam: a shield checks one text said by one role and returns a verdict.

A shield raises :class:`ShieldError` when it cannot run (its backend failed, its answer made no
sense); :class:`~agentloom.safety.service.SafetyService` turns that, and a timeout, into a
verdict with an ``error`` and decides per shield whether it blocks.
"""

from __future__ import annotations

from typing import Literal, Protocol

from agentloom.errors import UpstreamError
from agentloom.frozen import frozen

Role = Literal["user", "assistant", "tool"]
ShieldKind = Literal["rules", "llama_guard", "moderation"]


@frozen
class Violation:
    """One finding: its ``category`` (``"pii.email"``, ``"S1"``, ``"prompt_injection"`` ...),
    a message that never quotes the offending text, a score in [0, 1] and, when known, the
    ``span`` (start, end) of the text it covers."""

    category: str
    message: str
    score: float = 1.0
    span: tuple[int, int] | None = None


@frozen
class Verdict:
    shield_id: str
    violations: tuple[Violation, ...] = ()
    error: str | None = None  # the shield could not run; set by the service

    @property
    def flagged(self) -> bool:
        return bool(self.violations)

    @property
    def categories(self) -> tuple[str, ...]:
        """The distinct categories of the violations, in order of first appearance."""
        return tuple(dict.fromkeys(v.category for v in self.violations))


class ShieldError(UpstreamError):
    """A shield could not run: its backend failed or answered something unusable."""


class Shield(Protocol):
    """A content check. ``provider`` says what runs it (``"agentloom"`` in-process, the URL of
    an endpoint; ``None``: whichever inference provider serves ``model``, the model it asks)."""

    @property
    def id(self) -> str: ...

    @property
    def kind(self) -> ShieldKind: ...

    @property
    def provider(self) -> str | None: ...

    @property
    def model(self) -> str | None: ...

    async def check(self, text: str, *, role: Role) -> Verdict: ...

    async def aclose(self) -> None: ...
