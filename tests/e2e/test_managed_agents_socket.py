"""A managed agent's streamed reply over a real socket: a client that goes away mid-stream stops
the turn, and what the agent had said is stored (``incomplete``)."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from agentloom.inference.scripted import ScriptedModel, delay
from agentloom.testing.backend import FakeBackend
from tests.faults.support import eventually


async def test_a_client_gone_mid_stream_leaves_the_reply_stored(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turn("first", delay(1), " second")
    async with httpx2.AsyncClient(base_url=live_url, timeout=10) as http:
        body = {"name": "a", "agent_type": "simple", "config": {"model": backend.model}}
        agent = (await http.post("/managed-agents", json=body)).json()["id"]
        message = {"content": "Go", "stream": True}
        async with http.stream("POST", f"/managed-agents/{agent}/messages", json=message) as reply:
            async for line in reply.aiter_lines():
                if line.startswith("data: {"):
                    chunk = json.loads(line.removeprefix("data: "))
                    assert chunk["choices"][0]["delta"]["content"] == "first"
                    break  # leaving the block closes the stream: the client goes away

        async def stored() -> list[dict[str, Any]]:
            listed = await http.get(f"/managed-agents/{agent}/messages", params={"order": "asc"})
            data: list[dict[str, Any]] = listed.json()["data"]
            return data

        async def replied() -> bool:
            return len(await stored()) == 2

        async def backend_saw_disconnect() -> bool:
            return backend.disconnects > 0

        await eventually(backend_saw_disconnect, "the backend to see the client go")
        await eventually(replied, "the reply to be stored")
        user, answer = await stored()

    assert (user["content"], user["status"]) == ("Go", "delivered")
    assert (answer["content"], answer["status"]) == ("first", "incomplete")
    assert answer["stop_reason"] == "cancelled"
