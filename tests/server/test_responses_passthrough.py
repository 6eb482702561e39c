"""``/v1/responses`` passed through to a backend that serves the Responses API itself.

The backend is a second agentloom (its own fake backend and scripted model) served over a real
socket, configured in front as the provider ``native`` with ``responses = ["native-*"]``. The
official ``openai`` client talks to the front: answers come from the upstream's loop, not the
front's; the front stores them, applies the caller's project and records usage.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from pydantic import ValidationError

from agentloom.api.response import Response
from agentloom.config import ProviderSettings, Settings
from agentloom.errors import UpstreamError, UpstreamRateLimitError
from agentloom.inference.scripted import ScriptedModel, raise_error
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.plugins.server import audited_client, make_settings
from tests.plugins.tenants import ADMIN, Tenant, new_tenant, sdk
from tests.server.test_tenancy_limits import eventually, limit

NATIVE = "native-model"  # the upstream's model: its backend id
ALIAS = "native/native-model"  # the same model under its provider's name, in front


@pytest.fixture
def upstream_model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def upstream_backend(upstream_model: ScriptedModel) -> Iterator[FakeBackend]:
    fake = FakeBackend(upstream_model, models=[NATIVE])
    with fake.serve():
        yield fake


@pytest.fixture
def upstream_url(upstream_backend: FakeBackend, tmp_path: Path) -> Iterator[str]:
    """The upstream agentloom, its own database and backend, over a real socket."""
    url = f"sqlite:///{tmp_path / 'upstream.db'}"
    config = make_settings(upstream_backend, url, files_directory=tmp_path / "upstream-files")
    with serve(create_app(config)) as served:
        yield served


@pytest.fixture
def settings(
    backend: FakeBackend, database_url: str, upstream_url: str, tmp_path: Path
) -> Settings:
    front = make_settings(backend, database_url, files_directory=tmp_path / "files")
    native = ProviderSettings(
        name="native", base_url=upstream_url, models=[NATIVE], responses=["native-*"], timeout=5
    )
    return front.model_copy(update={"providers": [*front.providers, native]})


# --- create ----------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [NATIVE, ALIAS])
async def test_a_whole_answer_comes_from_the_upstream_and_is_stored_here(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    upstream_backend: FakeBackend,
    upstream_model: ScriptedModel,
    model: str,
) -> None:
    upstream_model.add_turn("Hello from upstream")

    answer = await client.responses.create(model=model, input="Hi", metadata={"k": "v"})

    assert answer.output_text == "Hello from upstream"
    assert answer.model == model  # the id the client used
    assert answer.id.startswith("resp_")
    assert backend.requests == []  # the front's own loop did not run
    assert upstream_backend.chat_requests[-1].messages[-1].content == "Hi"
    stored = await client.responses.retrieve(answer.id)
    assert stored.output_text == "Hello from upstream"
    assert (stored.model, stored.metadata) == (model, {"k": "v"})
    items = await client.responses.input_items.list(answer.id)
    assert [(i.type, i.role) for i in items.data] == [("message", "user")]  # type: ignore[union-attr]
    listed = await http.get("/responses")  # the SDK has no list
    assert [r["id"] for r in listed.json()["data"]] == [answer.id]


async def test_a_streamed_answer_is_relayed_and_stored_before_it_ends(
    client: openai.AsyncOpenAI, backend: FakeBackend, upstream_model: ScriptedModel
) -> None:
    upstream_model.add_turn("Streamed from upstream")

    stream = await client.responses.create(model=ALIAS, input="Hi", stream=True)
    events = []
    async for event in stream:
        events.append(event)
        if event.type == "response.completed":  # stored before it was released
            stored = await client.responses.retrieve(event.response.id)
            assert stored.status == "completed"

    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == "Streamed from upstream"
    assert {e.response.model for e in events if hasattr(e, "response")} == {ALIAS}
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert backend.requests == []


async def test_store_false_stores_nothing_here(
    client: openai.AsyncOpenAI, upstream_model: ScriptedModel
) -> None:
    upstream_model.add_turn("Not kept")

    answer = await client.responses.create(model=NATIVE, input="Hi", store=False)

    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(answer.id)


async def test_a_previous_response_id_chain_is_the_upstreams(
    client: openai.AsyncOpenAI, upstream_backend: FakeBackend, upstream_model: ScriptedModel
) -> None:
    upstream_model.add_turn("My name is Ada.")
    upstream_model.add_turn("You asked my name.")

    first = await client.responses.create(model=NATIVE, input="What is your name?")
    second = await client.responses.create(
        model=NATIVE, input="What did I ask?", previous_response_id=first.id
    )

    sent = [m.content for m in upstream_backend.chat_requests[-1].messages]
    assert sent == ["What is your name?", "My name is Ada.", "What did I ask?"]
    stored = await client.responses.retrieve(second.id)
    assert stored.previous_response_id == first.id
    assert stored.output_text == "You asked my name."


async def test_a_model_not_opted_in_runs_agentlooms_loop(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    upstream_backend: FakeBackend,
) -> None:
    scripted.add_turn("From the front's loop")

    answer = await client.responses.create(model=backend.model, input="Hi")

    assert answer.output_text == "From the front's loop"
    assert len(backend.requests) == 1
    assert upstream_backend.requests == []


# --- what does not fit -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"background": True}, "background"),
        ({"conversation": "conv_123"}, "conversation"),
        ({"tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}]}, "tools[0]"),
        (
            {
                "tools": [
                    {"type": "function", "name": "f", "parameters": {"type": "object"}},
                    {"type": "code_interpreter", "container": {"type": "auto"}},
                ]
            },
            "tools[1]",
        ),
        ({"tools": [{"type": "mcp", "server_label": "x", "server_url": "http://x"}]}, "tools[0]"),
        ({"guardrails": ["g"]}, "guardrails"),
        ({"guardrails": [{"type": "g"}]}, "guardrails"),
        ({"max_infer_iters": 3}, "max_infer_iters"),
    ],
)
async def test_what_only_agentloom_does_is_a_400(
    http: httpx2.AsyncClient, upstream_backend: FakeBackend, extra: dict[str, Any], param: str
) -> None:
    reply = await http.post("/responses", json={"model": NATIVE, "input": "Hi", **extra})

    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert (error["param"], error["code"]) == (param, "unsupported_parameter")
    assert upstream_backend.requests == []


# --- upstream failures -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "exception", "status"),
    [
        (UpstreamError("boom", status=500), openai.InternalServerError, 502),
        (UpstreamRateLimitError("slow down", status=429), openai.RateLimitError, 429),
    ],
)
async def test_an_upstream_failure_is_an_openai_error(
    client: openai.AsyncOpenAI,
    upstream_model: ScriptedModel,
    error: UpstreamError,
    exception: type[openai.APIStatusError],
    status: int,
) -> None:
    upstream_model.add_turn(raise_error(error))

    with pytest.raises(exception) as caught:
        await client.responses.create(model=NATIVE, input="Hi")

    assert caught.value.status_code == status


async def test_a_stream_refused_before_it_starts_is_an_http_error(
    client: openai.AsyncOpenAI, upstream_backend: FakeBackend
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:  # the upstream's 404, as a 400
        await client.responses.create(
            model=NATIVE, input="Hi", previous_response_id="resp_unknown", stream=True
        )

    assert "resp_unknown" in caught.value.message


async def test_a_response_failed_upstream_is_relayed_and_stored_failed(
    client: openai.AsyncOpenAI, upstream_model: ScriptedModel
) -> None:
    upstream_model.add_turn(raise_error(UpstreamError("boom", status=500)))

    stream = await client.responses.create(model=NATIVE, input="Hi", stream=True)
    events = [event async for event in stream]

    assert events[-1].type == "response.failed"
    stored = await client.responses.retrieve(events[-1].response.id)
    assert stored.status == "failed"


# --- the caller's project ----------------------------------------------------------------------


async def test_a_denied_model_is_not_found_for_that_project(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant, upstream_model: ScriptedModel
) -> None:
    projects = sdk(raw, admin_api_key=ADMIN).admin.organization.projects
    await projects.model_permissions.update(alpha.project_id, mode="deny_list", model_ids=[NATIVE])
    upstream_model.add_turn("for beta")

    with pytest.raises(openai.NotFoundError) as refused:
        await alpha.client.responses.create(model=NATIVE, input="Hi")
    answer = await beta.client.responses.create(model=NATIVE, input="Hi")

    assert refused.value.code == "model_not_found"
    assert answer.output_text == "for beta"
    with pytest.raises(openai.NotFoundError):  # stored under beta's project only
        await alpha.client.responses.retrieve(answer.id)


async def test_rate_limits_apply(
    raw: httpx2.AsyncClient, alpha: Tenant, upstream_model: ScriptedModel
) -> None:
    await limit(raw, alpha, NATIVE, max_requests_per_1_minute=1)
    upstream_model.add_turn("once")

    await alpha.client.responses.create(model=NATIVE, input="Hi")
    with pytest.raises(openai.RateLimitError):
        await alpha.client.responses.create(model=NATIVE, input="Hi")


async def test_usage_is_recorded_for_the_project(
    keyed: Settings, upstream_model: ScriptedModel
) -> None:
    quick = keyed.model_copy(
        update={"server": keyed.server.model_copy(update={"usage_flush_interval": 0.05})}
    )
    upstream_model.add_turn("one")
    upstream_model.add_turn("two")
    start = int(time.time()) // 86_400 * 86_400
    async with audited_client(quick) as raw:
        tenant = await new_tenant(raw, "alpha")
        await tenant.client.responses.create(model=ALIAS, input="Hi")
        stream = await tenant.client.responses.create(model=ALIAS, input="Hi", stream=True)
        _ = [event async for event in stream]
        usage = sdk(raw, admin_api_key=ADMIN).admin.organization.usage

        def report() -> Awaitable[Any]:
            return usage.completions(start_time=start, project_ids=[tenant.project_id])

        page = await eventually(
            report, lambda p: sum(r.num_model_requests for b in p.data for r in b.results) == 2
        )

    results = [r for b in page.data for r in b.results]
    assert sum(r.input_tokens for r in results) > 0
    assert sum(r.output_tokens for r in results) > 0


# --- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": "scripted"}, "needs a provider of type 'openai_compatible'"),
        ({"responses": [" "]}, "patterns must not be empty"),
    ],
)
def test_responses_patterns_are_checked(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ProviderSettings.model_validate({"name": "p", "responses": ["gpt-5*"], **fields})


# --- a backend that breaks off its stream ------------------------------------------------------

CREATED = {
    "type": "response.created",
    "sequence_number": 0,
    "response": Response(
        id="resp_broken", created_at=1, status="in_progress", model=NATIVE
    ).model_dump(mode="json"),
}


async def _breaking(scope: Any, receive: Any, send: Any) -> None:
    """A Responses backend whose stream sends ``response.created``, then dies."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream")],
        }
    )
    frame = b"event: response.created\ndata: " + json.dumps(CREATED).encode() + b"\n\n"
    await send({"type": "http.response.body", "body": frame, "more_body": True})
    raise RuntimeError("the backend died")


async def test_a_stream_broken_midway_ends_failed_and_is_stored_so(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    with serve(_breaking, lifespan=False) as url:
        front = make_settings(backend, database_url, files_directory=tmp_path / "files")
        broken = ProviderSettings(name="broken", base_url=url, models=[NATIVE], responses=["*"])
        config = front.model_copy(update={"providers": [broken]})
        async with audited_client(config) as raw:
            client = sdk(raw)
            stream = await client.responses.create(model=NATIVE, input="Hi", stream=True)
            events = [event async for event in stream]
            stored = await client.responses.retrieve("resp_broken")

    assert [e.type for e in events] == ["response.created", "response.failed"]
    assert events[-1].sequence_number == 1
    assert stored.status == "failed"
    assert stored.error is not None
    assert "closed the stream" in stored.error.message


# --- what the upstream is sent -----------------------------------------------------------------


async def test_image_url_objects_reach_the_upstream_in_openais_shape(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    received: list[Any] = []

    async def upstream(scope: Any, receive: Any, send: Any) -> None:
        """A Responses backend that keeps each body it is sent and answers an empty response."""
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        received.append(json.loads(body))
        answer = Response(id="resp_img", created_at=1, status="completed", model=NATIVE)
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer.model_dump_json().encode()})

    image = {"type": "input_image", "image_url": {"url": "https://example.com/a.png"}}
    detailed = {"type": "input_image", "image_url": {"url": "data:,x", "detail": "low"}}
    turn = {"role": "user", "content": [{"type": "input_text", "text": "See"}, image, detailed]}
    with serve(upstream, lifespan=False) as url:
        front = make_settings(backend, database_url, files_directory=tmp_path / "files")
        native = ProviderSettings(name="native", base_url=url, models=[NATIVE], responses=["*"])
        async with audited_client(front.model_copy(update={"providers": [native]})) as raw:
            await sdk(raw).responses.create(model=NATIVE, input=[turn])  # type: ignore[list-item]

    (sent,) = received
    assert sent["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "See"},
                {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"},
                {"type": "input_image", "image_url": "data:,x", "detail": "low"},
            ],
        }
    ]
