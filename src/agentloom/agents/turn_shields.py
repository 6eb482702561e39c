"""Llama Stack's ``input_shields`` and ``output_shields`` on the server's safety API.

- ``input_shields`` check the turn's new messages before the model is called, each through
  ``POST /v1/safety/run-shield`` (Llama Stack's own call): a violation ends the turn with its
  ``user_message``, and the model is not asked.
- ``output_shields`` are the turn's Responses ``guardrails``: the server checks the model's
  streamed text (holding it back until checked), the arguments of the tools it runs and their
  outputs, and refuses in the response itself. The server also checks each request's new input
  with them (the turn's messages, the local tools' outputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import openai

from agentloom.agents.turn_steps import Metadata, SafetyViolation
from agentloom.llm.types import Message

__all__ = ["ShieldMessage", "TurnShields", "violation_of"]

ShieldMessage: TypeAlias = dict[str, str]
_CHECKED = frozenset({"user", "assistant", "tool"})  # the server skips system/developer
_LEVELS = frozenset({"info", "warn", "error"})


class TurnShields:
    """The shields of an agent's turns."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        input_shields: Sequence[str],
        output_shields: Sequence[str],
    ) -> None:
        for name, ids in (("input_shields", input_shields), ("output_shields", output_shields)):
            if isinstance(ids, str) or not all(isinstance(i, str) and i for i in ids):
                raise ValueError(f"{name} must be a list of shield ids")
        self._client = client
        self.input = tuple(dict.fromkeys(input_shields))
        self.output = tuple(dict.fromkeys(output_shields))

    async def check_input(self, messages: Sequence[Message]) -> SafetyViolation | None:
        """The first violation an input shield finds in ``messages``, or ``None``."""
        checked = [_shield_message(m) for m in messages if m.role in _CHECKED and m.content]
        if not checked:
            return None
        for shield in self.input:
            answer = await self._client.post(
                "/safety/run-shield",
                body={"shield_id": shield, "messages": checked},
                cast_to=object,
            )
            violation = violation_of(answer)
            if violation is not None:
                return violation
        return None


def _shield_message(message: Message) -> ShieldMessage:
    return {"role": message.role, "content": message.text}  # a shield reads the text


def violation_of(answer: object) -> SafetyViolation | None:
    """``run-shield``'s ``{"violation": ...}`` answer as a :class:`SafetyViolation`."""
    if not isinstance(answer, Mapping):
        raise TypeError("run-shield answered something that is not a JSON object")
    found = answer.get("violation")
    if found is None:
        return None
    if not isinstance(found, Mapping):
        raise TypeError("run-shield answered a violation that is not a JSON object")
    level = found.get("violation_level", "error")
    message = found.get("user_message")
    return SafetyViolation(
        level if level in _LEVELS else "error",
        message if isinstance(message, str) else None,
        _metadata(found.get("metadata")),
    )


def _metadata(value: object) -> Metadata:
    if not isinstance(value, Mapping):
        return {}
    kept: Metadata = {}
    for key, item in value.items():
        if isinstance(item, str | bool):
            kept[str(key)] = item
        elif isinstance(item, list):
            kept[str(key)] = [str(v) for v in item]
    return kept
