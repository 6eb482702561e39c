"""The official ``openai`` Python SDK's helpers beyond plain ``create``: structured parsing,
raw stream iteration and raw responses with their headers (the app in-process)."""

from __future__ import annotations

import re

import openai
import pytest
from pydantic import BaseModel

from agentloom.inference.scripted import ScriptedModel, text
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received

REQUEST_ID = re.compile(r"req_[0-9a-f]{48}")


class Weather(BaseModel):
    city: str
    temperature_c: int
    sunny: bool


async def test_parse_with_text_format(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn('{"city": "Paris", "temperature_c": 21, "sunny": true}')

    parsed = await client.responses.parse(
        model=backend.model, input="Weather in Paris?", text_format=Weather
    )

    assert parsed.output_parsed == Weather(city="Paris", temperature_c=21, sunny=True)
    response_format = received(backend)[0]["response_format"]
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]
    assert schema["name"] == "Weather"
    assert schema["strict"] is True
    assert schema["schema"]["required"] == ["city", "temperature_c", "sunny"]
    assert schema["schema"]["properties"]["temperature_c"] == {
        "title": "Temperature C",
        "type": "integer",
    }


async def test_raw_stream_events_in_order(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Hello there!", chunk_size=6))

    stream = await client.responses.create(model=backend.model, input="Hi", stream=True)
    events = [event async for event in stream]

    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert deltas == ["Hello ", "there!"]


async def test_raw_response_has_request_id(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi!")

    raw = await client.responses.with_raw_response.create(model=backend.model, input="Hi")

    assert REQUEST_ID.fullmatch(raw.headers["x-request-id"])
    assert raw.request_id == raw.headers["x-request-id"]
    response = raw.parse()
    assert response.output_text == "Hi!"
    assert response._request_id == raw.request_id


async def test_client_request_id_is_echoed(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi!")

    raw = await client.responses.with_raw_response.create(
        model=backend.model, input="Hi", extra_headers={"X-Client-Request-Id": "trace-42.a"}
    )

    assert raw.request_id == "trace-42.a"


async def test_error_carries_request_id(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.retrieve("resp_missing")

    assert caught.value.request_id is not None
    assert REQUEST_ID.fullmatch(caught.value.request_id)
