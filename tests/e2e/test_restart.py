"""``agentloom serve`` as a real process: health, models, bad config, and crash recovery.

A server killed with SIGKILL mid-response leaves the response ``in_progress`` in the database;
the next server on the same database sees that the process that owned it is gone and marks it
``failed`` at startup.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from agentloom.inference.scripted import ScriptedModel, delay
from agentloom.testing.backend import FakeBackend
from tests.ports import unused_port

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

START_TIMEOUT = 30.0  # seconds for a server process to answer /v1/health
WAIT = 10.0  # seconds for any other condition
COMMAND = [sys.executable, "-m", "agentloom.cli.main"]


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def _env(database_url: str, backend: FakeBackend) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLOOM_")}
    env.update(
        AGENTLOOM_DATABASE_URL=database_url,
        AGENTLOOM_INFERENCE_BASE_URL=backend.base_url,
        AGENTLOOM_INFERENCE_MODELS=backend.model,
        PYTHONUNBUFFERED="1",
    )
    return env


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=WAIT)  # reaped: a zombie would still look alive to the next server
    # and its workers (``--workers``: uvicorn's children, in the server's own session), which
    # a killed supervisor leaves running
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    with httpx2.Client(base_url=server.base_url, timeout=1.0) as http:
        while True:
            if server.process.poll() is not None:
                raise AssertionError(f"the server exited early:\n{server.output()}")
            try:
                if http.get("/health").status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the server did not start:\n{server.output()}")
            time.sleep(0.05)


@contextmanager
def agentloom_serve(env: dict[str, str], log: Path, *extra: str) -> Iterator[Server]:
    """``agentloom serve`` on a free port, healthy; killed (and reaped) on the way out."""
    port = unused_port()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [*COMMAND, "serve", "--host", "127.0.0.1", "--port", str(port), *extra],
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # a process group of its own: _stop ends its workers too
        )
    server = Server(process, f"http://127.0.0.1:{port}/v1", log)
    try:
        _wait_healthy(server)
        yield server
    finally:
        _stop(process)


def _sse_events(reply: httpx2.Response) -> Generator[dict[str, object], None, None]:
    for line in reply.iter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            event: dict[str, object] = json.loads(line.removeprefix("data: "))
            yield event


def _status(http: httpx2.Client, response_id: str) -> str | None:
    reply = http.get(f"/responses/{response_id}")
    if reply.status_code == 404:
        return None
    reply.raise_for_status()
    status: str = reply.json()["status"]
    return status


def _read_until_first_delta(events: Iterator[dict[str, object]]) -> str:
    """The response's id, from ``response.created``; returns at the first text delta."""
    response_id = ""
    for event in events:
        if event["type"] == "response.created":
            response = event["response"]
            assert isinstance(response, dict)
            response_id = response["id"]
        if event["type"] == "response.output_text.delta":
            break
    assert response_id
    return response_id


def _start_and_crash(
    server: Server, backend: FakeBackend, sig: signal.Signals = signal.SIGKILL
) -> str:
    """Start a streamed response, wait until it is stored in progress, then signal the server."""
    body = {"model": backend.model, "input": "Take your time", "stream": True}
    with (
        httpx2.Client(base_url=server.base_url, timeout=WAIT) as http,
        http.stream("POST", "/responses", json=body) as reply,
    ):
        assert reply.status_code == 200, reply.read()
        # Kept referenced until the kill: closing this generator would close the stream, and
        # the server would finish the response as cancelled (a client disconnect).
        events = _sse_events(reply)
        response_id = _read_until_first_delta(events)
        deadline = time.monotonic() + WAIT
        while _status(http, response_id) != "in_progress":
            assert time.monotonic() < deadline, "the response was never stored in progress"
            time.sleep(0.02)
        server.process.send_signal(sig)
        server.process.wait(timeout=WAIT)
        events.close()
    return response_id


def test_a_response_in_progress_at_a_crash_is_failed_by_the_next_server(
    scripted: ScriptedModel, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    scripted.add_turn("Thinking", delay(60), "never sent")
    env = _env(database_url, backend)
    log = tmp_path / "server.log"

    with agentloom_serve(env, log) as first:
        response_id = _start_and_crash(first, backend)
        assert first.process.returncode == -signal.SIGKILL

    with agentloom_serve(env, log) as second, httpx2.Client(base_url=second.base_url) as http:
        reply = http.get(f"/responses/{response_id}", timeout=WAIT)
        assert reply.status_code == 200
        stored = reply.json()
        assert stored["status"] == "failed", second.output()
        assert stored["error"]["code"] == "server_error"
        assert "stopped" in stored["error"]["message"]
        assert "marked 1 responses" in second.output()


def test_sigterm_finalises_a_running_response_as_cancelled(
    scripted: ScriptedModel, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    """A graceful stop waits a bounded time for running responses, then cancels them: the
    response is stored ``cancelled`` with what was streamed, never left ``in_progress``."""
    scripted.add_turn("Thinking", delay(60), "never sent")
    env = _env(database_url, backend)
    log = tmp_path / "server.log"

    with agentloom_serve(env, log) as first:
        response_id = _start_and_crash(first, backend, signal.SIGTERM)
        assert first.process.returncode in (0, -signal.SIGTERM), first.output()

    with agentloom_serve(env, log) as second, httpx2.Client(base_url=second.base_url) as http:
        stored = http.get(f"/responses/{response_id}", timeout=WAIT).json()
        assert stored["status"] == "cancelled", second.output()
        assert stored["output"][0]["content"][0]["text"] == "Thinking"
        assert "marked" not in second.output()  # nothing was left for recovery


def test_workers_share_the_port_and_the_database(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    env = _env(database_url, backend)
    log = tmp_path / "server.log"

    with (
        agentloom_serve(env, log, "--workers", "2") as server,
        httpx2.Client(base_url=server.base_url, timeout=WAIT) as http,
    ):
        body = {"model": backend.model, "input": "Hello"}
        ids = [http.post("/responses", json=body).json()["id"] for _ in range(40)]
        listed = http.get("/responses", params={"limit": 100}).json()["data"]
        assert {r["id"] for r in listed} == set(ids)
        assert all(r["status"] == "completed" for r in listed)
        _wait_for(lambda: server.output().count("is ready") == 2)
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=WAIT)
    assert server.output().count("is ready") == 2


def _wait_for(condition: Callable[[], bool]) -> None:
    """Until ``condition`` holds or WAIT seconds passed (a loaded machine starts workers
    slowly; the one that answered first may be the only one up yet)."""
    deadline = time.monotonic() + WAIT
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_health_and_models_of_a_served_process(backend: FakeBackend, tmp_path: Path) -> None:
    env = _env(f"sqlite:///{tmp_path / 'agentloom.db'}", backend)

    with (
        agentloom_serve(env, tmp_path / "server.log") as server,
        httpx2.Client(base_url=server.base_url, timeout=WAIT) as http,
    ):
        health = http.get("/health")
        models = http.get("/models")

    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    assert models.status_code == 200
    listed = models.json()
    assert listed["object"] == "list"
    served = [(m["id"], m["owned_by"]) for m in listed["data"]]
    assert served[:1] == [(backend.model, "default")]  # listed once (default/... answers too)
    assert served[1:] == [("all-MiniLM-L6-v2", "agentloom")]  # the embedded embedding model
    assert (tmp_path / "agentloom.db").exists()


def _serve_with_config(config: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLOOM_")}
    return subprocess.run(
        [*COMMAND, "serve", "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=False,
    )


def test_serve_with_invalid_toml_exits_2_with_a_readable_message(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[server\nport = 1\n")

    result = _serve_with_config(config)

    assert result.returncode == 2
    assert result.stderr.startswith("agentloom: ")
    assert "not valid TOML" in result.stderr
    assert "bad.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_with_an_unknown_key_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "typo.toml"
    config.write_text("[server]\nprot = 8000\n")

    result = _serve_with_config(config)

    assert result.returncode == 2
    assert "invalid configuration" in result.stderr
    assert "prot" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_with_a_missing_config_file_exits_2(tmp_path: Path) -> None:
    result = _serve_with_config(tmp_path / "missing.toml")

    assert result.returncode == 2
    assert "config file not found" in result.stderr
    assert "Traceback" not in result.stderr
