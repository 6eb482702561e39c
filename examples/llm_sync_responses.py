"""The LLM adapter called synchronously, as the OpenHands seed's ``llm.responses()`` is: no
``asyncio`` in sight. Adapted from the seed's example 26 (a call asking for encrypted reasoning,
printing it if present) and its tool round trip, with an image, per-call metadata, a strict tool
and the condenser.

Runs anywhere, offline: a scripted model stands in for the LLM (served as an OpenAI-compatible
backend over HTTP) and agentloom serves the Responses API in front of it, on a temporary SQLite
file. Point ``base_url`` at OpenAI, vLLM or Ollama to use a real one.

    python examples/llm_sync_responses.py
"""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path

from agentloom.config import DatabaseSettings, ProviderSettings, Settings
from agentloom.errors import ContextLengthExceededError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn, raise_error, reasoning, tool_call
from agentloom.llm import LLM, Condenser, FunctionTool, ImageContent, Message, TextContent
from agentloom.llm.condense import INSTRUCTIONS
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
FOO = FunctionTool(  # the seed's "foo" (13.2); "note" is optional: strict mode makes it nullable
    "foo",
    "Do foo with x.",
    {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "note": {"type": "string"}},
        "required": ["x"],
    },
)


def model(request: ChatRequest) -> Turn:
    """The scripted LLM: a context window of 400 characters, and the answers the example needs."""
    last = request.messages[-1]
    text = last.content if isinstance(last.content, str) else "(with an image)"
    if request.messages[0].content == INSTRUCTIONS:
        return "The user asked about a pixel and about foo; both were answered."
    if sum(len(m.content) for m in request.messages if isinstance(m.content, str)) > 400:
        return [raise_error(ContextLengthExceededError("the input is longer than the window"))]
    if last.role == "tool":
        return f"foo says {json.loads(text)['status']}."
    if text.startswith("Please call foo"):
        return [tool_call("foo", {"x": 1, "note": None}, "fc_call_abc123")]
    if text == "(with an image)":
        return [reasoning("A tiny image, one pixel."), "It is a single pixel."]
    return f"You said: {text[:40]}"


def main() -> None:
    scripted = ScriptedModel(model)
    backend = FakeBackend(scripted, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
        )
        with (
            serve(create_app(settings)) as url,
            LLM(
                "demo-model",
                base_url=url,
                path="responses",
                encrypted_reasoning=True,  # include=["reasoning.encrypted_content"]
                metadata={"app": "example"},
                condenser=Condenser(keep_recent=2),
            ) as llm,
        ):
            run(llm)


def run(llm: LLM) -> None:
    system = Message.system("You are a helpful assistant.")
    look = Message.user([TextContent("What is this?"), ImageContent.from_bytes(PIXEL)])
    reply = llm.responses([system, look], metadata={"step": "image"})
    (item,) = reply.message.reasoning_items
    print(f"image: {reply.text} (reasoning: {reply.reasoning!r})")
    print(f"encrypted reasoning present: {item.encrypted_content is not None}")

    ask = Message.user("Please call foo with x=1.")
    first = llm.responses([system, ask], [FOO])
    (call,) = first.tool_calls
    print(f"tool call: {call.name}({call.arguments}) id={call.call_id} origin={call.origin}")
    print(f"  as the model sent it: {call.raw.arguments if call.raw else None}")
    result = json.dumps({"status": "ok", "log": "step done. " * 26})
    history = [system, ask, first.message, Message.tool(call.call_id, result, "foo")]
    second = llm.responses(history, [FOO])
    print(f"after the tool: {second.text}")

    # one more message and the conversation is past the model's window
    history += [second.message, Message.user("Tell me more, in detail please.")]
    third = llm.responses(history, [FOO])
    if third.condensation is not None:
        done = third.condensation
        print(f"condensed {done.replaced} messages into: {done.summary}")
    print(f"answer: {third.text}")
    print(f"tokens: {json.dumps([third.metrics.input_tokens, third.metrics.output_tokens])}")


if __name__ == "__main__":
    main()
