"""Counting a request's input tokens on an OpenAI-compatible backend.

Three ways, from the most to the least exact:

- ``tokenizer``: vLLM's ``POST /tokenize`` (at the server root, not under ``/v1``) renders the
  messages and tools with the model's chat template and tokenizer. Free, exact. A backend that
  answers 404/405/501, or without an integer ``count`` (llama.cpp's ``/tokenize`` wants
  ``content``; Ollama has none), is remembered as unable to tokenize and not asked again.
- ``usage``: the same request as a non-streamed completion with ``max_tokens: 1``; its
  ``usage.prompt_tokens`` is exact on any backend that reports usage, at the price of a prefill
  and one generated token.
- ``estimate``: :mod:`agentloom.inference.estimate`, with no backend call at all.

``token_count = "auto"`` tries them in that order and always answers, degrading to the estimate
when the backend cannot count (or cannot be reached); a named method is used alone, and when it
cannot count the failure is raised as an :class:`~agentloom.errors.UpstreamError`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final, TypeAlias

from agentloom.errors import UpstreamError
from agentloom.inference.base import ChatRequest, TokenCount, TokenCountSetting
from agentloom.inference.estimate import estimate_count

__all__ = ["BackendTokenCounter", "Post", "tokenize_body", "tokenize_path", "usage_body"]

log = logging.getLogger(__name__)

Post: TypeAlias = Callable[[dict[str, object]], Awaitable[object]]
"""Sends a JSON body to one endpoint; returns the decoded answer, raises ``UpstreamError``."""

_NO_ENDPOINT: Final = frozenset({404, 405, 501})


def tokenize_path(base_path: str) -> str:
    """vLLM's tokenize endpoint for a backend whose API lives under ``base_path`` (``/v1``)."""
    return base_path.rstrip("/").removesuffix("/v1") + "/tokenize"


def tokenize_body(chat: dict[str, object]) -> dict[str, object]:
    """The ``/tokenize`` body for a chat completions body: its model, messages and tools."""
    body: dict[str, object] = {"model": chat["model"], "messages": chat["messages"]}
    if "tools" in chat:
        body["tools"] = chat["tools"]
    body["add_generation_prompt"] = True
    return body


def usage_body(chat: dict[str, object]) -> dict[str, object]:
    """A chat completions body as a non-streamed completion of one token."""
    body = {key: value for key, value in chat.items() if key != "stream_options"}
    body["stream"] = False
    body["max_tokens"] = 1
    return body


def _tokenize_count(answer: object) -> int | None:
    count = answer.get("count") if isinstance(answer, dict) else None
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        return count
    return None


def _prompt_tokens(answer: object) -> int | None:
    usage = answer.get("usage") if isinstance(answer, dict) else None
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        return tokens
    return None


class BackendTokenCounter:
    """``count_tokens`` for one provider: ``tokenize`` and ``complete`` post to its backend."""

    def __init__(
        self, name: str, setting: TokenCountSetting, *, tokenize: Post, complete: Post
    ) -> None:
        self._name = name
        self._setting = setting
        self._tokenize = tokenize
        self._complete = complete
        self.can_tokenize = True  # until the backend shows it cannot

    async def count(self, request: ChatRequest, chat: dict[str, object]) -> TokenCount:
        """The input tokens of ``request``, whose chat completions body is ``chat``."""
        if self._setting == "estimate":
            return estimate_count(request)
        if self._setting == "tokenize":
            return _required(await self._tokenizer(chat), "has no vLLM-style /tokenize endpoint")
        if self._setting == "usage":
            return _required(await self._usage(chat), "reported no usage.prompt_tokens")
        return await self._auto(request, chat)

    async def _auto(self, request: ChatRequest, chat: dict[str, object]) -> TokenCount:
        try:
            counted = await self._tokenizer(chat)
        except UpstreamError as exc:
            if exc.status is None:  # not reached: asking again would only wait again
                return self._fallback(request, exc)
            counted = None
        if counted is not None:
            return counted
        try:
            counted = await self._usage(chat)
        except UpstreamError as exc:
            return self._fallback(request, exc)
        return counted if counted is not None else estimate_count(request)

    async def _tokenizer(self, chat: dict[str, object]) -> TokenCount | None:
        """The tokenizer's count; ``None`` (remembered) if the backend has no tokenizer."""
        if not self.can_tokenize:
            return None
        try:
            answer = await self._tokenize(tokenize_body(chat))
        except UpstreamError as exc:
            if exc.status not in _NO_ENDPOINT:
                raise
            answer = None
        count = _tokenize_count(answer)
        if count is None:
            self.can_tokenize = False
            log.info("provider %r: the backend cannot tokenize; counting otherwise", self._name)
            return None
        return TokenCount(count, "tokenizer")

    async def _usage(self, chat: dict[str, object]) -> TokenCount | None:
        """The prompt tokens of a one-token completion; ``None`` if the backend reports none."""
        count = _prompt_tokens(await self._complete(usage_body(chat)))
        return None if count is None else TokenCount(count, "usage")

    def _fallback(self, request: ChatRequest, exc: UpstreamError) -> TokenCount:
        log.warning(
            "provider %r: token count estimated, the backend failed: %s", self._name, exc.message
        )
        return estimate_count(request)


def _required(counted: TokenCount | None, failure: str) -> TokenCount:
    if counted is None:
        raise UpstreamError(f"cannot count tokens: the inference backend {failure}")
    return counted
