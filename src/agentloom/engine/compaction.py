"""Compaction: older items summarised by the model into one ``compaction`` item.

The summary is sealed (``encrypted_content``, see :mod:`agentloom.sealing`) with the id of the
last item it replaces; :func:`agentloom.engine.messages.visible` decides what the model sees of
a history holding one. Compaction happens two ways:

* ``POST /v1/responses/compact``: the whole context is summarised; the answer is the input
  messages (user, system, developer) followed by the compaction item, ready to be the input of
  the next request.
* ``context_management: [{"type": "compaction", "compact_threshold": N}]`` on create: when the
  assembled input is estimated above N tokens, everything before the current turn (the last user
  message and what follows it) is summarised before the model is called; the compaction item is
  the response's first output item, and the model sees the summary in place of those items.

The model writes the summary from a plain-text transcript of the items, which every backend
accepts whatever its chat template thinks of tool calls or roles.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentloom.api.compaction import CompactedResponse
from agentloom.api.content import InputFile, InputImage, InputText, OutputText, Refusal
from agentloom.api.items import (
    Compaction,
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    Message,
    Reasoning,
    StoredItem,
    ToolSearchCall,
    ToolSearchOutput,
)
from agentloom.api.response import ResponseUsage
from agentloom.api.shell_items import ShellKindCall, ShellKindOutput
from agentloom.engine import mcp_history
from agentloom.engine.client_tools import chat_call, found_text
from agentloom.engine.context import Context
from agentloom.engine.items import with_id
from agentloom.engine.messages import Summary, SummaryReader, visible
from agentloom.engine.usage import response_usage
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.inference import base as inf
from agentloom.inference.catalog import Resolved
from agentloom.sealing import Sealer, SealError
from agentloom.tools.server_tools import TOOL_ITEMS

PURPOSE = "compaction"
DEFAULT_MAX_SUMMARY_TOKENS = 2048

SUMMARIZER = (
    "You compress conversations between a user and an AI assistant. Write a summary that lets "
    "the assistant carry on without the original messages: what the user wants and asked for, "
    "facts, decisions and constraints established, names, numbers, identifiers, file paths and "
    "code that still matter, results of tool calls, and what was being worked on last. Write "
    "plain text in the conversation's language, without a preamble."
)


@frozen
class Summarized:
    text: str
    usage: inf.Usage | None


class Compactions:
    """Reads, writes and produces compaction items with one sealer."""

    def __init__(
        self, sealer: Sealer, *, max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    ) -> None:
        self._sealer = sealer
        self._max_summary_tokens = max_summary_tokens

    def read(self, item: Compaction, *, param: str | None) -> Summary:
        """The summary inside ``item``; a 400 naming ``param`` if it was not sealed here or
        was changed."""
        try:
            payload = json.loads(self._sealer.open(PURPOSE, item.encrypted_content))
            return Summary(text=str(payload["summary"]), through=payload.get("through"))
        except (SealError, ValueError, KeyError, TypeError) as exc:
            raise InvalidRequestError(
                f"The compaction item's encrypted_content cannot be read: {exc}. Send compaction "
                "items exactly as this server returned them.",
                param=f"{param}.encrypted_content" if param else None,
                code="invalid_encrypted_content",
            ) from None

    def item(self, summary: Summary) -> Compaction:
        payload = json.dumps({"summary": summary.text, "through": summary.through})
        sealed = self._sealer.seal(PURPOSE, payload.encode())
        return Compaction(id=new_id("cmp"), encrypted_content=sealed)

    async def summarize(
        self, provider: inf.Provider, model: str, items: Sequence[StoredItem]
    ) -> Summarized:
        """Ask the model for a summary of ``items`` (as the model sees them)."""
        shown = [items[i] for i in visible(items, self.read, first_new=len(items))]
        request = inf.ChatRequest(
            model=model,
            messages=(
                inf.ChatMessage(role="system", content=SUMMARIZER),
                inf.ChatMessage(role="user", content=_ask(transcript(shown, self.read))),
            ),
            max_tokens=self._max_summary_tokens,
        )
        parts: list[str] = []
        usage: inf.Usage | None = None
        async for chunk in provider.stream(request):
            if isinstance(chunk, inf.TextDelta):
                parts.append(chunk.text)
            elif isinstance(chunk, inf.Usage):
                usage = chunk
        text = "".join(parts).strip()
        if not text:
            raise UpstreamError("the model answered the compaction request with an empty summary")
        return Summarized(text, usage)


async def compact(compactions: Compactions, resolved: Resolved, seen: Context) -> CompactedResponse:
    """``/responses/compact``: the input messages the model sees, then a compaction item that
    summarises the whole context (it replaces what is not an input message)."""
    if not seen.items:
        raise InvalidRequestError("There is nothing to compact: give 'input'.", param="input")
    done = await compactions.summarize(resolved.provider, resolved.model.backend_id, seen.items)
    shown = visible(seen.items, compactions.read, first_new=len(seen.items))
    kept = [with_id(seen.items[i].model_copy()) for i in shown if _is_input_message(seen.items[i])]
    usage = ResponseUsage() if done.usage is None else response_usage(done.usage)
    return CompactedResponse(
        id=new_id("resp"),
        created_at=int(time.time()),
        output=[*kept, compactions.item(Summary(done.text, None))],
        usage=usage,
    )


def _is_input_message(item: StoredItem) -> bool:
    return isinstance(item, Message) and item.role != "assistant"


def turn_start(items: Sequence[StoredItem], read: SummaryReader) -> int:
    """Where the current turn starts: the last user message. 0 when there is nothing before
    it worth compacting (no user message, or only an earlier summary)."""
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, Message) and item.role == "user":
            before = visible(items[:index], read, first_new=index)
            return index if any(items[i].type != "compaction" for i in before) else 0
    return 0


def transcript(items: Sequence[StoredItem], read: SummaryReader) -> str:
    """The items as plain text, one paragraph each."""
    return "\n\n".join(_line(item, read) for item in items)


def _ask(text: str) -> str:
    return f"The conversation so far:\n\n{text}\n\nWrite the summary now."


def _line(item: StoredItem, read: SummaryReader) -> str:
    """``item`` as one paragraph: a server tool's item as its tool defines it, the loop's own
    kinds by :data:`_LINES`."""
    if (tool := TOOL_ITEMS.get(item.type)) is not None:
        return tool.line(item)
    return _LINES[item.type](item, read)


def _message_line(item: Message, read: SummaryReader) -> str:
    return f"{item.role.upper()}: {_content(item)}"


def _call_line(item: FunctionCall, read: SummaryReader) -> str:
    return f"TOOL CALL {item.name} ({item.call_id}): {item.arguments}"


def _custom_call_line(item: CustomToolCall, read: SummaryReader) -> str:
    return f"TOOL CALL {item.name} ({item.call_id}):\n{item.input}"


def _output_line(item: FunctionCallOutput | CustomToolCallOutput, read: SummaryReader) -> str:
    return f"TOOL RESULT ({item.call_id}): {item.output_text()}"


def _shell_kind_line(item: ShellKindCall | ShellKindOutput, read: SummaryReader) -> str:
    if isinstance(item, ShellKindOutput):
        return f"TOOL RESULT ({item.call_id}): {item.output_text()}"
    call = chat_call(item)
    return f"TOOL CALL {call.name} ({item.call_id}): {call.arguments}"


def _reasoning_line(item: Reasoning, read: SummaryReader) -> str:
    return f"ASSISTANT (thinking): {item.text()}"


def _summary_line(item: Compaction, read: SummaryReader) -> str:
    return f"EARLIER SUMMARY: {read(item, param=None).text}"


def _mcp_line(item: mcp_history.McpItem, read: SummaryReader) -> str:
    return mcp_history.line(item)


def _tool_search_line(item: ToolSearchCall | ToolSearchOutput, read: SummaryReader) -> str:
    if isinstance(item, ToolSearchCall):
        return f"TOOL SEARCH ({item.call_id}): {json.dumps(item.arguments)}"
    return f"TOOL SEARCH RESULT ({item.call_id}): {found_text(item)}"


_LINES: dict[str, Callable[[Any, SummaryReader], str]] = {
    "message": _message_line,
    "function_call": _call_line,
    "custom_tool_call": _custom_call_line,
    "function_call_output": _output_line,
    "custom_tool_call_output": _output_line,
    "tool_search_call": _tool_search_line,
    "tool_search_output": _tool_search_line,
    **dict.fromkeys(
        ("shell_call", "local_shell_call", "apply_patch_call", "shell_call_output"),
        _shell_kind_line,
    ),
    **dict.fromkeys(("local_shell_call_output", "apply_patch_call_output"), _shell_kind_line),
    "reasoning": _reasoning_line,
    "compaction": _summary_line,
    **dict.fromkeys(mcp_history.MCP_TYPES, _mcp_line),
}
"""How each kind the loop itself knows reads in a compaction transcript, by ``type``."""


def _content(message: Message) -> str:
    pieces = []
    for part in message.content:
        if isinstance(part, InputText | OutputText):
            pieces.append(part.text)
        elif isinstance(part, Refusal):
            pieces.append(f"(refused: {part.refusal})")
        elif isinstance(part, InputImage):
            pieces.append("[image]")
        elif isinstance(part, InputFile):
            pieces.append(f"[file {part.filename or ''}]".replace(" ]", "]"))
    return " ".join(pieces)
