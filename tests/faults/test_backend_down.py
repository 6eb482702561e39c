"""An inference backend down when the server starts, then up, then down again, with a real
``agentloom serve`` process and the fake backend started late on the port the configuration
names (Ollama not up yet: the most common first run).

The server's answers: while the backend has never been listed, a request for its model is a
503 ``backend_unavailable`` naming the backend and the connection error (not a 404 "does not
exist"), liveness is 200 and readiness 503; once the backend is up, discovery (retried in the
background, its intervals tiny here) finds it and the same request is answered without a
restart; when it goes down again its model stays known: a 503 again, never a 404.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import Server, agentloom_serve
from tests.faults.support import eventually
from tests.ports import unused_port

pytestmark = pytest.mark.both_databases  # readiness probes the database

MODEL = "llama3.2"
RETRIES = "[discovery]\nretry_initial = 0.05\nretry_max = 0.2\n"  # seconds


@contextmanager
def _served_without_backend(database_url: str, folder: Path, port: int) -> Iterator[Server]:
    """``agentloom serve`` whose one provider (``default``, discovering its models) is at
    ``port``, where nothing listens yet."""
    settings = folder / "server.toml"
    settings.write_text(RETRIES)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLOOM_")}
    env.update(
        AGENTLOOM_DATABASE_URL=database_url,
        AGENTLOOM_INFERENCE_BASE_URL=f"http://127.0.0.1:{port}/v1",
        AGENTLOOM_FILES_DIRECTORY=str(folder / "files"),
        PYTHONUNBUFFERED="1",
    )
    with agentloom_serve(env, folder / "server.log", "--config", str(settings)) as server:
        yield server


def _ask(client: openai.AsyncOpenAI) -> Any:
    return client.responses.create(model=MODEL, input="Hi")


async def _unavailable(client: openai.AsyncOpenAI) -> dict[str, Any]:
    """The error of a request for the model, which must be a 503."""
    with pytest.raises(openai.APIStatusError) as caught:
        await _ask(client)
    assert caught.value.status_code == 503, caught.value.body
    body: dict[str, Any] = caught.value.response.json()["error"]
    return body


async def _readiness(http: httpx2.AsyncClient) -> tuple[int, dict[str, Any]]:
    reply = await http.get("/health/ready")
    answer: dict[str, Any] = reply.json()
    return reply.status_code, answer


def _backend_check(readiness: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in readiness["checks"] if c["kind"] == "backend")
    return found


async def test_a_backend_down_at_start_is_a_503_then_served_once_it_is_up(
    database_url: str, tmp_path: Path
) -> None:
    port = unused_port()
    scripted = ScriptedModel()
    backend = FakeBackend(scripted, models=[MODEL])
    with _served_without_backend(database_url, tmp_path, port) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        http = httpx2.AsyncClient(base_url=server.base_url, timeout=10)
        async with client, http:
            # down from the start: never listed, so not known; a 503 naming it, not a 404
            error = await _unavailable(client)
            assert error["code"] == "backend_unavailable"
            assert error["type"] == "server_error"
            assert f"The model '{MODEL}'" in error["message"]
            assert "provider 'default'" in error["message"]
            assert f"127.0.0.1:{port}" in error["message"]
            assert "connection" in error["message"].lower()  # the error, as the client told it
            assert (await http.get("/health")).status_code == 200  # liveness stays cheap
            status, readiness = await _readiness(http)
            assert status == 503
            assert readiness["status"] == "not_ready"
            assert _backend_check(readiness)["status"] == "down"
            assert f"127.0.0.1:{port}" in _backend_check(readiness)["error"]
            assert {"database", "job_runner"} <= {
                c["kind"] for c in readiness["checks"] if c["status"] == "ok"
            }

            # up: discovery retried in the background finds it, no restart
            with backend.serve(port=port):

                async def listed() -> bool:
                    models = await client.models.list()
                    return MODEL in [m.id for m in models.data]

                await eventually(listed, "the background discovery to list the model")
                scripted.add_turn("Hello!")
                answer = await _ask(client)
                assert answer.output_text == "Hello!"
                status, readiness = await _readiness(http)
                assert (status, readiness["status"]) == (200, "ready"), readiness

            # down again: the model stays known, and a request for it is a 503 naming it
            error = await _unavailable(client)
            assert error["code"] == "backend_unavailable"
            assert "could not reach the inference backend 'default'" in error["message"]
            assert MODEL in [m.id for m in (await client.models.list()).data]
            status, readiness = await _readiness(http)
            assert (status, readiness["status"]) == (503, "not_ready")
    log = server.output()
    assert log.count("model discovery failed for provider 'default'") <= 2  # once per outage
    assert "does not exist" not in log
