"""Anthropic's Messages API served by any backend: a request becomes the provider seam's
:class:`~agentloom.inference.base.ChatRequest`, and the chunks that come back become a Message or
its stream of events (:mod:`.message_events`), under the caller's project (model permissions,
rate limits and usage, as every model call).

Mapping: ``system`` is the system message; a user message's text and images are its parts, its
``tool_result`` blocks are tool messages (placed before the rest of it, as chat backends expect
them right after the assistant's calls); an assistant message's ``tool_use`` blocks are its tool
calls and its ``thinking`` its reasoning. ``tools`` are functions; ``tool_choice`` ``any`` is
``required``, ``tool`` names the function, ``disable_parallel_tool_use`` turns parallel calls
off. ``stop_sequences`` are the backend's ``stop``; ``metadata.user_id`` its ``user``;
``thinking`` (enabled) asks a reasoning backend for its reasoning, given back as thinking blocks.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence

from agentloom.api import anthropic as a
from agentloom.errors import InvalidRequestError
from agentloom.inference import base as inf
from agentloom.inference.catalog import ModelCatalog, Resolved
from agentloom.services.gateway.message_events import MessageBuilder
from agentloom.services.organization.usage import UsageLedger

__all__ = ["MessagesGateway"]


class MessagesGateway:
    def __init__(self, catalog: ModelCatalog, usage: UsageLedger | None) -> None:
        self._catalog = catalog
        self._usage = usage

    async def create(self, request: a.MessagesRequest) -> a.Message:
        """The whole answer."""
        builder, chunks = await self._started(request, collected=True)
        async for chunk in chunks:
            builder.take(chunk)
        return builder.message()

    async def stream(self, request: a.MessagesRequest) -> AsyncIterator[tuple[str, bytes]]:
        """The answer's events (``event`` name, JSON data), in Anthropic's order."""
        builder, chunks = await self._started(request, collected=False)
        return builder.events(chunks)

    async def count_tokens(self, request: a.CountTokensRequest) -> a.TokenCount:
        resolved = await self._catalog.resolve(request.model, use=False)
        chat = _chat_request(request, resolved.model.backend_id)
        counted = await resolved.provider.count_tokens(chat)
        return a.TokenCount(input_tokens=counted.tokens)

    async def _started(
        self, request: a.MessagesRequest, *, collected: bool
    ) -> tuple[MessageBuilder, AsyncIterator[inf.Chunk]]:
        refused = request.refused()
        if refused is not None:
            raise InvalidRequestError(f"{refused}: {a.REFUSED[refused]}.", param=refused)
        resolved = await self._catalog.resolve(request.model)
        chat = _chat_request(request, resolved.model.backend_id, collected=collected)
        builder = MessageBuilder(
            request.model, thinking=_thinks(request), on_end=self._ended(resolved)
        )
        return builder, resolved.provider.stream(chat)

    def _ended(self, resolved: Resolved) -> MessageBuilder.Ended:
        def record(usage: inf.Usage | None) -> None:
            if self._usage is not None:
                self._usage.record_call(resolved.model.id, usage)

        return record


def _chat_request(
    request: a.CountTokensRequest, backend_id: str, *, collected: bool = False
) -> inf.ChatRequest:
    tools = tuple(_tool(tool) for tool in request.tools or ())
    choice, parallel = _tool_choice(request.tool_choice, bool(tools))
    sent = request if isinstance(request, a.MessagesRequest) else None
    return inf.ChatRequest(
        model=backend_id,
        messages=(*_system(request.system), *_messages(request.messages)),
        tools=tools,
        tool_choice=choice,
        parallel_tool_calls=parallel,
        temperature=sent.temperature if sent else None,
        top_p=sent.top_p if sent else None,
        max_tokens=sent.max_tokens if sent else None,
        reasoning_effort=_effort(request),
        user=sent.metadata.user_id if sent and sent.metadata else None,
        stop=tuple(sent.stop_sequences or ()) if sent else (),
        collected=collected,
    )


def _thinks(request: a.CountTokensRequest) -> bool:
    return request.thinking is not None and request.thinking.type != "disabled"


def _effort(request: a.CountTokensRequest) -> str | None:
    """How hard a reasoning backend is asked to think: ``output_config.effort`` (``max`` is
    ``high``), ``medium`` for thinking without it; nothing unless thinking is on."""
    if not _thinks(request):
        return None
    effort = request.output_config.effort if request.output_config else None
    return "high" if effort == "max" else effort or "medium"


def _system(system: str | list[a.TextBlock] | None) -> tuple[inf.ChatMessage, ...]:
    if not system:
        return ()
    text = system if isinstance(system, str) else "\n\n".join(block.text for block in system)
    return (inf.ChatMessage(role="system", content=text),)


def _messages(messages: Sequence[a.InputMessage]) -> list[inf.ChatMessage]:
    out: list[inf.ChatMessage] = []
    for message in messages:
        if message.role == "system":
            out.extend(
                _system(
                    message.content
                    if isinstance(message.content, str)
                    else [b for b in message.content if isinstance(b, a.TextBlock)]
                )
            )
        elif isinstance(message.content, str):
            out.append(inf.ChatMessage(role=message.role, content=message.content))
        elif message.role == "assistant":
            out.append(_assistant(message.content))
        else:
            out.extend(_user(message.content))
    return out


def _assistant(blocks: Sequence[a.InputBlock]) -> inf.ChatMessage:
    text = "".join(b.text for b in blocks if isinstance(b, a.TextBlock))
    thinking = "".join(b.thinking for b in blocks if isinstance(b, a.ThinkingBlock))
    calls = tuple(
        inf.ToolCall(id=b.id, name=b.name, arguments=json.dumps(b.input))
        for b in blocks
        if isinstance(b, a.ToolUseBlock)
    )
    return inf.ChatMessage(
        role="assistant", content=text or None, tool_calls=calls, reasoning=thinking or None
    )


def _user(blocks: Sequence[a.InputBlock]) -> list[inf.ChatMessage]:
    results = [_tool_message(b) for b in blocks if isinstance(b, a.ToolResultBlock)]
    parts: list[inf.ContentPart] = []
    for block in blocks:
        if isinstance(block, a.TextBlock):
            parts.append(inf.TextPart(block.text))
        elif isinstance(block, a.ImageBlock):
            parts.append(inf.ImagePart(_image_url(block)))
        elif isinstance(block, a.ToolUseBlock | a.ThinkingBlock):
            raise InvalidRequestError(
                f"A user message cannot hold a {block.type} block.", param="messages"
            )
    rest = [inf.ChatMessage(role="user", content=tuple(parts))] if parts else []
    return [*results, *rest]


def _tool_message(block: a.ToolResultBlock) -> inf.ChatMessage:
    content = block.content
    if not isinstance(content, str):
        if any(isinstance(part, a.ImageBlock) for part in content):
            raise InvalidRequestError(
                "An image in a tool_result is not supported: chat backends take text from "
                "tools. Put the image in the user message.",
                param="messages",
            )
        content = "".join(part.text for part in content if isinstance(part, a.TextBlock))
    if block.is_error:
        content = f"Error: {content}"
    return inf.ChatMessage(role="tool", tool_call_id=block.tool_use_id, content=content)


def _image_url(block: a.ImageBlock) -> str:
    source = block.source
    if isinstance(source, a.UrlSource):
        return source.url
    return f"data:{source.media_type};base64,{source.data}"


def _tool(tool: a.Tool) -> inf.FunctionSpec:
    if tool.type not in (None, "custom"):
        raise InvalidRequestError(
            f"Tool type '{tool.type}' ({tool.name}) is one of Anthropic's own server tools, "
            "which this server does not run; declare a custom tool with an input_schema.",
            param="tools",
        )
    return inf.FunctionSpec(
        name=tool.name, description=tool.description, parameters=tool.input_schema
    )


def _tool_choice(
    choice: a.ToolChoice | None, has_tools: bool
) -> tuple[inf.ToolChoice | None, bool | None]:
    if choice is None or not has_tools:
        return None, None
    parallel = False if choice.disable_parallel_tool_use else None
    if choice.type == "tool":
        if not choice.name:
            raise InvalidRequestError(
                "tool_choice of type 'tool' needs a name.", param="tool_choice"
            )
        return inf.NamedToolChoice(choice.name), parallel
    mapped: dict[str, inf.ToolChoice] = {"auto": "auto", "any": "required", "none": "none"}
    return mapped[choice.type], parallel
