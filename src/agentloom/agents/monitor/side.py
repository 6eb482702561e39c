"""The model calls a monitor makes beside its loop: planning, judging relevance, summarising,
extracting. Each is one instruction and one text, no tools, no conversation state; their usage
adds up so a tick can report what it cost in all.

Replies meant to be JSON are read forgivingly (:func:`json_reply`): a code fence around them or
prose before or after them is skipped; a reply with no JSON in it reads as ``None``.
"""

from __future__ import annotations

import json
import re
from typing import cast

from agentloom.agents.base import AgentUsage
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import Message

__all__ = ["SideModel", "json_reply"]

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n(.*?)```", re.DOTALL)


class SideModel:
    """One-shot calls to ``llm``; :attr:`usage` counts them until :meth:`reset`."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.usage = AgentUsage()

    def reset(self) -> AgentUsage:
        """Start counting afresh; what was counted until now."""
        counted, self.usage = self.usage, AgentUsage()
        return counted

    async def ask(self, instructions: str, content: str) -> str:
        """The model's text answer to ``content`` under ``instructions``."""
        response = await self.llm.chat([Message.system(instructions), Message.user(content)])
        self.usage = self.usage.add(response.metrics)
        return response.text


def json_reply(text: str) -> JSONValue:
    """The JSON array or object in a model's reply (fenced or not), or ``None``."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    starts = [at for at in (body.find("["), body.find("{")) if at >= 0]
    if not starts:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(body[min(starts) :])
    except json.JSONDecodeError:
        return None
    return cast(JSONValue, value)
