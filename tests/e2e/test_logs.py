"""``agentloom serve --log-format json``: every line a JSON object (uvicorn's too), each carrying
the request id, the project, the response id and, with tracing on, the trace id; an access line
per request when asked; no prompt or answer text unless ``[logging] content`` asks for it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.e2e.test_restart import WAIT, _env, agentloom_serve

PROMPT = "Tell me about zebras"
ANSWER = "Zebras have stripes."


def _lines(log: Path) -> list[dict[str, object]]:
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # a line that is not JSON fails here


def _run(env: dict[str, str], log: Path, backend: FakeBackend, *flags: str) -> httpx2.Response:
    with agentloom_serve(env, log, "--log-format", "json", *flags) as server:
        with httpx2.Client(base_url=server.base_url, timeout=WAIT) as http:
            reply = http.post(
                "/responses",
                json={"model": backend.model, "input": PROMPT},
                headers={"x-request-id": "req-logs-1"},
            )
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=WAIT)
    assert reply.status_code == 200, log.read_text()
    return reply


@pytest.mark.parametrize("metrics", ["true", "false"])  # the access log needs no metrics
def test_json_lines_carry_the_request_project_and_response(
    scripted: ScriptedModel, backend: FakeBackend, tmp_path: Path, metrics: str
) -> None:
    scripted.add_turn(ANSWER)
    env = _env(f"sqlite:///{tmp_path / 'agentloom.db'}", backend)
    env["AGENTLOOM_METRICS"] = metrics
    log = tmp_path / "server.log"

    reply = _run(env, log, backend, "--access-log")

    lines = _lines(log)
    assert {"time", "level", "logger", "message"} <= set(lines[0])
    assert any(line["logger"] == "uvicorn.error" for line in lines)
    accessed = [line for line in lines if line["logger"] == "agentloom.access"]
    assert {line["path"] for line in accessed} == {"/v1/health", "/v1/responses"}
    (access,) = [line for line in accessed if line["method"] == "POST"]
    assert access["path"] == "/v1/responses"
    assert access["status"] == 200
    assert access["request_id"] == "req-logs-1"
    assert access["project"]
    (ended,) = [line for line in lines if line["logger"] == "agentloom.responses"]
    assert ended["response_id"] == reply.json()["id"]
    assert ended["request_id"] == "req-logs-1"
    assert (ended["status"], ended["model"]) == ("completed", backend.model)
    assert int(str(ended["output_tokens"])) > 0
    text = log.read_text()
    assert "zebras" not in text
    assert "stripes" not in text


def test_content_is_logged_only_when_asked(
    scripted: ScriptedModel, backend: FakeBackend, tmp_path: Path
) -> None:
    scripted.add_turn(ANSWER)
    env = _env(f"sqlite:///{tmp_path / 'agentloom.db'}", backend)
    env["AGENTLOOM_LOG_CONTENT"] = "true"
    log = tmp_path / "server.log"

    _run(env, log, backend)

    (ended,) = [line for line in _lines(log) if line["logger"] == "agentloom.responses"]
    assert ended["input_text"] == [{"role": "user", "text": PROMPT}]
    assert ended["output_text"] == ANSWER
    assert not [line for line in _lines(log) if line["logger"] == "agentloom.access"]


def test_with_tracing_the_lines_name_the_trace(
    scripted: ScriptedModel, backend: FakeBackend, tmp_path: Path
) -> None:
    async def receive(request: Request) -> Response:
        await request.body()
        return Response(b"", media_type="application/x-protobuf")

    collector = Starlette(routes=[Route("/v1/traces", receive, methods=["POST"])])
    scripted.add_turn(ANSWER)
    env = _env(f"sqlite:///{tmp_path / 'agentloom.db'}", backend)
    log = tmp_path / "server.log"

    with serve(collector, lifespan=False) as collector_url:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector_url.removesuffix("/v1")
        reply = _run(env, log, backend)

    trace_id = reply.headers["traceresponse"].split("-")[1]
    (ended,) = [line for line in _lines(log) if line["logger"] == "agentloom.responses"]
    assert ended["trace_id"] == trace_id
