"""Stand-in for ``openhands.sdk.llm``: messages, token accounting, and an LLM that calls an
OpenAI-compatible endpoint (LiteLLM's ``openai/<model>``) with urllib."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TextContent:
    text: str


def content_to_str(contents: list[TextContent]) -> list[str]:
    return [content.text for content in contents]


@dataclass
class Message:
    role: str
    content: list[TextContent]
    tool_call_id: str | None = None


@dataclass
class MessageToolCall:
    id: str
    name: str
    arguments: str


@dataclass
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0


@dataclass
class Metrics:
    accumulated_token_usage: TokenUsage | None = None


@dataclass
class LLM:
    model: str
    base_url: str | None = None
    api_key: str | None = None
    metrics: Metrics = field(default_factory=Metrics)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        provider, _, model = self.model.partition("/")
        assert provider == "openai", self.model
        body = {"model": model, "messages": messages, "tools": tools, "stream": False}
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "authorization": f"Bearer {self.api_key}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            exc.close()  # it holds the connection
            raise
        self._count(reply.get("usage") or {})
        return reply["choices"][0]["message"]

    def _count(self, usage: dict[str, int]) -> None:
        tokens = self.metrics.accumulated_token_usage or TokenUsage()
        tokens.prompt_tokens += usage.get("prompt_tokens", 0)
        tokens.completion_tokens += usage.get("completion_tokens", 0)
        self.metrics.accumulated_token_usage = tokens
