"""Background responses across real ``agentloom serve`` processes on one database: a job whose
process is killed is taken over by another and settled; a SIGTERM hands a job back; webhooks
from either process arrive signed, each event once (a failed attempt retried)."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx2
import openai
import pytest

from agentloom.inference.scripted import ScriptedModel, delay
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, _env, agentloom_serve
from tests.plugins.webhooks import WebhookReceiver

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

LEASE = "2"  # seconds: a killed process's jobs are taken over soon


def _wait_status(http: httpx2.Client, response_id: str, wanted: set[str]) -> dict[str, object]:
    deadline = time.monotonic() + 3 * WAIT
    while True:
        body: dict[str, object] = http.get(f"/responses/{response_id}").json()
        if body["status"] in wanted:
            return body
        assert time.monotonic() < deadline, f"still {body['status']}"
        time.sleep(0.05)


def test_a_killed_processs_job_is_taken_over_and_runs_again(
    scripted: ScriptedModel, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    scripted.add_turn("Thinking", delay(60), "never sent")  # the run that is killed
    scripted.add_turn("Done by the other process.")  # the run that takes over
    env = {**_env(database_url, backend), "AGENTLOOM_JOBS_LEASE_SECONDS": LEASE}
    body = {"model": backend.model, "input": "Hi", "background": True}

    with (
        agentloom_serve(env, tmp_path / "one.log") as first,
        httpx2.Client(base_url=first.base_url, timeout=WAIT) as http,
    ):
        response_id = http.post("/responses", json=body).json()["id"]
        _wait_status(http, response_id, {"in_progress"})
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=WAIT)

    with (
        agentloom_serve(env, tmp_path / "two.log") as second,
        httpx2.Client(base_url=second.base_url, timeout=WAIT) as http,
    ):
        final = _wait_status(http, response_id, {"completed", "failed"})
        streamed = http.get(f"/responses/{response_id}", params={"stream": "true"})

    assert final["status"] == "completed", second.output()
    assert final["output"][0]["content"][0]["text"] == "Done by the other process."  # type: ignore[index]
    assert "event: response.completed" in streamed.text
    assert "Thinking" not in streamed.text  # the killed run's events were cleared


def test_sigterm_hands_a_running_job_back_to_the_queue(
    scripted: ScriptedModel, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    scripted.add_turn("Thinking", delay(60), "never sent")
    scripted.add_turn("Finished after the hand-back.")
    env = {**_env(database_url, backend), "AGENTLOOM_JOBS_DRAIN_SECONDS": "0.5"}
    body = {"model": backend.model, "input": "Hi", "background": True}

    with (
        agentloom_serve(env, tmp_path / "one.log") as first,
        httpx2.Client(base_url=first.base_url, timeout=WAIT) as http,
    ):
        response_id = http.post("/responses", json=body).json()["id"]
        _wait_status(http, response_id, {"in_progress"})
        first.process.send_signal(signal.SIGTERM)
        first.process.wait(timeout=WAIT)

    with (
        agentloom_serve(env, tmp_path / "two.log") as second,
        httpx2.Client(base_url=second.base_url, timeout=WAIT) as http,
    ):
        final = _wait_status(http, response_id, {"completed", "failed", "cancelled"})

    assert final["status"] == "completed", second.output()
    assert final["output"][0]["content"][0]["text"] == "Finished after the hand-back."  # type: ignore[index]


def test_webhooks_from_two_processes_are_signed_and_sent_once_each(
    scripted: ScriptedModel,
    backend: FakeBackend,
    database_url: str,
    tmp_path: Path,
    receiver: WebhookReceiver,
) -> None:
    for index in range(8):
        scripted.add_turn(f"Answer {index}.")
    env = {
        **_env(database_url, backend),
        "AGENTLOOM_WEBHOOK_ALLOW_LOOPBACK": "true",
        "AGENTLOOM_WEBHOOK_RETRY_DELAYS": "0.2,0.2",
    }
    receiver.answers = [500]  # the first delivery is retried
    body = {"model": backend.model, "input": "Hi", "background": True}

    with (
        agentloom_serve(env, tmp_path / "one.log") as first,
        agentloom_serve(env, tmp_path / "two.log") as second,
        httpx2.Client(base_url=first.base_url, timeout=WAIT) as one,
        httpx2.Client(base_url=second.base_url, timeout=WAIT) as two,
    ):
        hook = {"name": "all", "url": receiver.url(), "event_types": ["response.completed"]}
        secret = one.post("/webhook_endpoints", json=hook).json()["signing_secret"]
        ids = [(one, two)[i % 2].post("/responses", json=body).json()["id"] for i in range(8)]
        asyncio.run(receiver.wait_for(9, within=3 * WAIT))
        time.sleep(0.5)  # nothing more comes

    client = openai.OpenAI(api_key="unused", base_url="http://unused.test")
    delivered = [r for r in receiver.received if r.answered == 200]
    events = [client.webhooks.unwrap(r.body, r.headers, secret=secret) for r in delivered]
    assert sorted(e.data.id for e in events) == sorted(ids)
    assert len(receiver.received) == 9
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 8
