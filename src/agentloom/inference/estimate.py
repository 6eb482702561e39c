"""Token counts estimated without a tokenizer: about four characters a token.

Used where nothing better is at hand: to fit a conversation into a context window
(``truncation: "auto"``) and as the last resort of ``count_tokens``. Text (message content,
reasoning, tool call names and arguments, tool definitions as the JSON a chat template renders)
counts at :data:`CHARS_PER_TOKEN`; images and files, whose cost depends on pixels and pages this
module never looks at, count a flat number of tokens each. Expect an error of tens of percent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    ContentPart,
    FunctionSpec,
    ImagePart,
    TextPart,
    TokenCount,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "FILE_TOKENS",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "REPLY_PRIMER_TOKENS",
    "TOOLS_PREAMBLE_TOKENS",
    "estimate_count",
    "estimate_request",
    "estimate_tokens",
]

CHARS_PER_TOKEN: Final = 4
MESSAGE_OVERHEAD_TOKENS: Final = 4  # the role and delimiters a chat template wraps a message in
REPLY_PRIMER_TOKENS: Final = 3  # the assistant header that opens the reply
TOOLS_PREAMBLE_TOKENS: Final = 50  # the template's "you may call these functions" text
# OpenAI's figures: 85 at low detail; a 1024x1024 image at high detail is 765.
IMAGE_TOKENS: Final[Mapping[str, int]] = {"low": 85, "high": 765, "auto": 765}
FILE_TOKENS: Final = 1000  # a page or so of a document


def estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    """The estimated tokens of ``messages`` alone (no tools, no reply primer)."""
    return sum(_message_tokens(m) for m in messages)


def estimate_request(request: ChatRequest) -> int:
    """The estimated input tokens of ``request``: its messages, its tools, the reply primer."""
    tools = sum(_tool_tokens(spec) for spec in request.tools)
    preamble = TOOLS_PREAMBLE_TOKENS if request.tools else 0
    return estimate_tokens(request.messages) + preamble + tools + REPLY_PRIMER_TOKENS


def estimate_count(request: ChatRequest) -> TokenCount:
    return TokenCount(estimate_request(request), "estimate")


def _message_tokens(message: ChatMessage) -> int:
    chars = len(message.reasoning or "")
    chars += sum(len(c.name) + len(c.arguments) for c in message.tool_calls)
    media = 0
    if isinstance(message.content, str):
        chars += len(message.content)
    elif message.content is not None:
        chars += sum(len(p.text) for p in message.content if isinstance(p, TextPart))
        media = sum(_media_tokens(p) for p in message.content)
    return chars // CHARS_PER_TOKEN + media + MESSAGE_OVERHEAD_TOKENS


def _media_tokens(part: ContentPart) -> int:
    if isinstance(part, TextPart):
        return 0
    if isinstance(part, ImagePart):
        return IMAGE_TOKENS[part.detail]
    return FILE_TOKENS


def _tool_tokens(spec: FunctionSpec) -> int:
    function: dict[str, object] = {"name": spec.name, "parameters": spec.parameters}
    if spec.description is not None:
        function["description"] = spec.description
    rendered = json.dumps({"type": "function", "function": function}, ensure_ascii=False)
    return len(rendered) // CHARS_PER_TOKEN
