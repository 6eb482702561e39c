"""The agent SDK's own cost: the LLM adapter and the orchestrator against raw ``openai`` calls.

Each scenario is measured twice on the same endpoint: once with the official ``openai`` client
doing the same HTTP work by hand (the floor), once through ``agentloom.llm.LLM`` or an agent.
The difference is what the SDK adds per call (typed messages, routing, assembly, telemetry).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import openai

from agentloom.agents.orchestrator import OrchestratorAgent
from agentloom.agents.tools.base import function_tool
from agentloom.bus import EventBus
from agentloom.llm import LLM, Message
from bench.backend import MODEL
from bench.scenarios import Latency, latency

HELLO = [{"role": "user", "content": "Hello"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@dataclass(frozen=True, slots=True)
class Pair:
    name: str
    direct: Latency
    sdk: Latency


async def _raw_chat_stream(client: openai.AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model=MODEL, messages=HELLO, stream=True, stream_options={"include_usage": True}
    )
    if not [chunk async for chunk in stream]:
        raise RuntimeError("the chat completion stream was empty")


async def _raw_responses_stream(client: openai.AsyncOpenAI) -> None:
    stream = await client.responses.create(model=MODEL, input="Hello", store=False, stream=True)
    if not [event async for event in stream]:
        raise RuntimeError("the response stream was empty")


async def _raw_tool_round_trip(client: openai.AsyncOpenAI) -> None:
    first = await client.chat.completions.create(model=MODEL, messages=HELLO, tools=[WEATHER])
    message = first.choices[0].message
    calls = message.tool_calls or []
    results = [
        {"role": "tool", "tool_call_id": call.id, "content": "sunny in Paris"} for call in calls
    ]
    history = [*HELLO, message.model_dump(exclude_none=True), *results]
    await client.chat.completions.create(model=MODEL, messages=history, tools=[WEATHER])


async def _pair(
    name: str,
    direct: Callable[[], Awaitable[None]],
    sdk: Callable[[], Awaitable[None]],
    *,
    requests: int,
    warmup: int,
) -> Pair:
    async def run(step: Callable[[], Awaitable[None]]) -> Latency:
        return await latency(None, lambda _: step(), requests=requests, warmup=warmup)

    return Pair(name, await run(direct), await run(sdk))


async def measure(backend_url: str, server_url: str, *, requests: int, warmup: int) -> list[Pair]:
    """Three pairs: chat completion, Responses call, orchestrator tool round trip."""
    bus = EventBus()  # telemetry on, with nobody listening: what an app pays by default
    raw_backend = openai.AsyncOpenAI(base_url=backend_url, api_key="bench", max_retries=0)
    raw_server = openai.AsyncOpenAI(base_url=server_url, api_key="bench", max_retries=0)
    chat = LLM(MODEL, base_url=backend_url, path="completions", bus=bus, max_retries=0)
    responses = LLM(MODEL, base_url=server_url, path="responses", bus=bus, max_retries=0)
    agent = OrchestratorAgent(chat, [get_weather])
    hello = [Message.user("Hello")]

    async def agent_round_trip() -> None:
        result = await agent.run("What is the weather in Paris?")
        if not (result.tool_results and result.content):
            raise RuntimeError(f"the agent did not complete a tool round trip: {result}")

    try:
        return [
            await _pair(
                "SDK `LLM.chat`, Chat Completions path (vs `openai` streamed)",
                lambda: _raw_chat_stream(raw_backend),
                lambda: _consume(chat.chat(hello)),
                requests=requests,
                warmup=warmup,
            ),
            await _pair(
                "SDK `LLM.chat`, Responses path via agentloom (vs `openai` streamed)",
                lambda: _raw_responses_stream(raw_server),
                lambda: _consume(responses.chat(hello)),
                requests=requests,
                warmup=warmup,
            ),
            await _pair(
                "SDK orchestrator agent, one tool round trip (vs two `openai` calls)",
                lambda: _raw_tool_round_trip(raw_backend),
                agent_round_trip,
                requests=requests,
                warmup=warmup,
            ),
        ]
    finally:
        await agent.aclose()
        await chat.aclose()
        await responses.aclose()
        await raw_backend.close()
        await raw_server.close()


async def _consume(call: Awaitable[object]) -> None:
    await call
