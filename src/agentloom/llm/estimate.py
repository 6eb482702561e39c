"""Token counts for a call whose server reported no usage: an estimate, and marked as one.

The input is the request as Chat Completions would send it (messages, tools, images at a flat
cost: :func:`agentloom.inference.estimate.estimate_request`); the output is the answer's text,
reasoning and tool calls at about four characters a token. :class:`Metrics` says
``tokens_estimated=True`` so no one takes it for the backend's count.
"""

from __future__ import annotations

from agentloom.inference.base import ChatRequest, Usage
from agentloom.inference.estimate import CHARS_PER_TOKEN, estimate_request
from agentloom.llm.types import Message

__all__ = ["estimated_usage"]


def estimated_usage(request: ChatRequest, answer: Message) -> Usage:
    """The estimated usage of ``request`` answered by ``answer``."""
    reasoning = _tokens(len(answer.reasoning or ""))
    said = len(answer.text) + sum(len(c.name) + len(c.arguments) for c in answer.tool_calls)
    return Usage(
        input_tokens=estimate_request(request),
        output_tokens=_tokens(said) + reasoning,
        reasoning_tokens=reasoning,
    )


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)  # rounded up: any text is at least a token
