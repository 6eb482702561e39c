"""The response writer: one write for a quick response, two for a long one, on real storage."""

from __future__ import annotations

import asyncio
import json
import time

from agentloom.api.items import Message
from agentloom.api.response import Response
from agentloom.responses.persist import ResponseWriter
from agentloom.storage.database import Database


def _response(status: str = "in_progress") -> Response:
    return Response.model_validate(
        {"id": "resp_w", "created_at": int(time.time()), "status": status, "model": "m"}
    )


def _input() -> list[Message]:
    return [Message.model_validate({"id": "msg_in", "role": "user", "content": "hi"})]


async def test_quick_response_is_written_once_and_complete(database: Database) -> None:
    writer = ResponseWriter(database.responses, _response(), _input(), begin_delay=60)
    assert await database.responses.get("resp_w") is None
    await writer.finish(_response("completed"))
    stored = await database.responses.get("resp_w")
    assert stored is not None
    assert stored.response.status == "completed"
    history = await database.responses.history("resp_w")
    assert history is not None
    assert [i.id for i in history] == ["msg_in"]


async def test_long_response_is_visible_in_progress_then_finished(database: Database) -> None:
    writer = ResponseWriter(database.responses, _response(), _input(), begin_delay=0)
    for _ in range(200):  # bounded wait for the in-progress row
        if await database.responses.exists("resp_w"):
            break
        await asyncio.sleep(0.01)
    stored = await database.responses.get("resp_w")
    assert stored is not None
    assert stored.response.status == "in_progress"
    await writer.finish(_response("completed"))
    stored = await database.responses.get("resp_w")
    assert stored is not None
    assert stored.response.status == "completed"


async def test_the_final_write_gives_the_reply_and_stores_the_same_response(
    database: Database,
) -> None:
    """The JSON made once for the row is the reply's (``model_dump_json()``'s, byte for byte),
    and the row it stored, its output apart, reads back as the same response."""
    final = Response.model_validate(
        {
            "id": "resp_w",
            "created_at": int(time.time()),
            "status": "completed",
            "model": "m",
            "metadata": {"output": "[]"},  # a look-alike of the output elsewhere in the body
            "output": [
                {
                    "type": "message",
                    "id": "msg_out",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "hello", "annotations": []}],
                }
            ],
        }
    )
    writer = ResponseWriter(database.responses, _response(), _input(), begin_delay=60)
    reply = await writer.finish(final)
    assert reply == final.model_dump_json()
    stored = await database.responses.get("resp_w")
    assert stored is not None
    assert '"msg_out"' not in stored.response.body  # the output is stored as items
    body = json.loads(stored.response.body)
    body["output"] = [json.loads(item.body) for item in stored.output]
    assert Response.model_validate(body) == final
