"""Managed agents (``/v1/managed-agents``) through HTTP against the app with the fake backend, on
SQLite and PostgreSQL: the agents, streamed messages in OpenJarvis's SSE format (checked frame by
frame), tools run between model turns, queued messages and runs followed like background
responses, state, tasks, schedules, and the mistakes a client can make."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from openai.types.chat import ChatCompletionChunk

from agentloom.agents.builders import AGENTS
from agentloom.api.managed_agents import DEFAULT_AGENT_TYPE
from agentloom.config import Settings
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, delay, raise_error, tool_call
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received
from tests.plugins.server import FAKE_EMBEDDING_MODEL, audited_client

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

SETTLED = {"completed", "failed", "cancelled"}
Frames = list[tuple[str, Any]]


def frames(text: str) -> Frames:
    """Each SSE frame as (its event name, or "" for none; its data as JSON, or "[DONE]")."""
    found: Frames = []
    for block in text.strip().split("\n\n"):
        event, data = "", ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = line.removeprefix("data: ")
        found.append((event, data if data == "[DONE]" else json.loads(data)))
    return found


def contents(found: Frames) -> list[str]:
    return [d["choices"][0]["delta"]["content"] for e, d in found if _content(e, d)]


def _content(event: str, data: Any) -> bool:
    return event == "" and isinstance(data, dict) and "content" in data["choices"][0]["delta"]


OPTIONAL_RUNTIMES = ("claude_code", "openhands")  # agents whose runtime is an optional install


async def made(http: httpx2.AsyncClient, backend: FakeBackend, **fields: Any) -> dict[str, Any]:
    """An agent (an orchestrator on the fake model unless told otherwise)."""
    config = {"model": backend.model, **fields.pop("config", {})}
    body = {"name": "helper", "agent_type": "orchestrator", "config": config, **fields}
    reply = await http.post("/managed-agents", json=body)
    assert reply.status_code == 200, reply.text
    agent: dict[str, Any] = reply.json()
    return agent


async def send(http: httpx2.AsyncClient, agent_id: str, content: str, **fields: Any) -> Any:
    reply = await http.post(
        f"/managed-agents/{agent_id}/messages", json={"content": content, **fields}
    )
    assert reply.status_code == 200, reply.text
    return frames(reply.text) if fields.get("stream") else reply.json()


async def messages(http: httpx2.AsyncClient, agent_id: str) -> list[dict[str, Any]]:
    """The agent's messages, oldest first."""
    reply = await http.get(f"/managed-agents/{agent_id}/messages", params={"order": "asc"})
    listed: list[dict[str, Any]] = reply.json()["data"]
    return listed


async def started_run(http: httpx2.AsyncClient, agent_id: str, run_id: str) -> None:
    for _ in range(300):
        run = (await http.get(f"/managed-agents/{agent_id}/runs/{run_id}")).json()
        if run["status"] != "queued":
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"run {run_id} never started")


async def settled_run(http: httpx2.AsyncClient, agent_id: str, run_id: str) -> dict[str, Any]:
    for _ in range(300):
        run: dict[str, Any] = (await http.get(f"/managed-agents/{agent_id}/runs/{run_id}")).json()
        if run["status"] in SETTLED:
            return run
        await asyncio.sleep(0.02)
    raise AssertionError(f"run {run_id} is still {run['status']}")


def error_of(reply: httpx2.Response, status: int) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    error: dict[str, Any] = reply.json()["error"]
    return error


# --- the agents ----------------------------------------------------------------------------


async def test_an_agent_is_made_read_listed_changed_and_deleted(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    config = {"tools": ["calculator"], "instructions": "Be brief.", "instruction": "kept as given"}
    first = await made(http, backend, config=config)
    second = await made(http, backend, name="other")

    fetched = (await http.get(f"/managed-agents/{first['id']}")).json()
    page = (await http.get("/managed-agents", params={"limit": 1})).json()
    rest = (await http.get("/managed-agents", params={"limit": 1, "after": page["last_id"]})).json()
    oldest = (await http.get("/managed-agents", params={"order": "asc"})).json()
    changed = await http.patch(
        f"/managed-agents/{first['id']}", json={"name": "renamed", "config": {"max_turns": 3}}
    )
    deleted = (await http.delete(f"/managed-agents/{first['id']}")).json()

    assert first["id"].startswith("magent_")
    assert (first["object"], first["agent_type"], first["status"]) == (
        "managed_agent",
        "orchestrator",
        "idle",
    )
    assert first["config"] == {
        "model": backend.model,
        "tools": ["calculator"],
        "instructions": "Be brief.",
        "instruction": "kept as given",  # OpenJarvis's other keys are kept
        "max_turns": 10,
    }
    assert fetched == first
    assert [a["id"] for a in page["data"]] == [second["id"]]
    assert page["has_more"]
    assert page["agents"] == page["data"]  # OpenJarvis's key
    assert [a["id"] for a in rest["data"]] == [first["id"]]
    assert not rest["has_more"]
    assert [a["id"] for a in oldest["data"]] == [first["id"], second["id"]]
    assert changed.json()["name"] == "renamed"
    assert changed.json()["config"] == {"max_turns": 3, "tools": []}  # replaced whole
    assert deleted == {"id": first["id"], "object": "managed_agent.deleted", "deleted": True}
    assert error_of(await http.get(f"/managed-agents/{first['id']}"), 404)["param"] == (
        "managed_agent_id"
    )


async def test_the_default_type_is_openjarviss_and_every_registered_one_is_accepted(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    default = (await http.post("/managed-agents", json={"name": "plain"})).json()

    assert default["agent_type"] == DEFAULT_AGENT_TYPE == "monitor_operative"
    for agent_type in AGENTS:  # aliases included (native_react, native_openhands)
        if agent_type in OPTIONAL_RUNTIMES:
            continue
        agent = await made(http, backend, agent_type=agent_type)
        assert agent["agent_type"] == agent_type


async def test_an_agent_whose_runtime_is_missing_is_a_400_naming_what_to_install(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    for agent_type in OPTIONAL_RUNTIMES:  # neither Claude Code's SDK nor OpenHands is here
        body = {"name": "ext", "agent_type": agent_type, "config": {"model": backend.model}}
        reply = await http.post("/managed-agents", json=body)

        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error["param"] == "agent_type"
        assert "install" in error["message"]


async def test_a_template_gives_the_type_and_config(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    agent = await made(http, backend, template_id="assistant", config={"max_turns": 4})
    del agent["config"]["model"]

    assert agent["agent_type"] == "orchestrator"
    assert agent["config"] == {"tools": ["calculator", "think"], "max_turns": 4}
    assert agent["template_id"] == "assistant"


@pytest.mark.parametrize(
    ("body", "param", "named"),
    [
        ({"agent_type": "telepathy"}, "agent_type", "telepathy"),
        ({"config": {"tools": ["calculator", "shell_exec"]}}, "config.tools", "shell_exec"),
        ({"config": {"tools": ["mcp:nowhere"]}}, "config.tools", "mcp:nowhere"),
        ({"template_id": "nope"}, "template_id", "nope"),
        (
            {"config": {"schedule": {"type": "interval", "every": 0.1}}},
            "config.schedule.every",
            "1",
        ),
        (
            {"config": {"schedule": {"type": "cron", "cron": "61 * * * *"}}},
            "config.schedule.cron",
            "61",
        ),
        (
            {"config": {"schedule_type": "interval", "schedule_value": "soon"}},
            "config.schedule_value",
            "seconds",
        ),
        ({"agent_type": "simple", "config": {"tools": ["think"]}}, None, "simple agent"),
    ],
)
async def test_what_cannot_be_made_is_a_400_naming_it(
    http: httpx2.AsyncClient, body: dict[str, Any], param: str | None, named: str
) -> None:
    error = error_of(await http.post("/managed-agents", json={"name": "x", **body}), 400)

    assert named in error["message"]
    if param is not None:
        assert error["param"] == param


async def test_a_schedule_is_added_changed_and_removed_with_the_config(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    agent = await made(http, backend, config={"schedule_type": "interval", "schedule_value": 3600})
    path = f"/managed-agents/{agent['id']}"
    cron = {"config": {"schedule": {"type": "cron", "cron": "0 9 * * mon"}}}

    every = agent["schedule"]
    same = {"config": {"schedule": {"type": "interval", "every": 3600}, "max_turns": 3}}
    kept = (await http.patch(path, json=same)).json()["schedule"]
    moved = (await http.patch(path, json=cron)).json()["schedule"]
    removed = (await http.patch(path, json={"config": {"max_turns": 2}})).json()

    assert (every["every"], every["runs"]) == (3600.0, 0)
    assert kept == every  # the same period: its next run stays
    assert moved["id"] == every["id"]
    assert moved["cron"] == "0 9 * * mon"
    assert "schedule" not in removed


# --- streamed messages ---------------------------------------------------------------------


async def test_a_streamed_message_runs_tools_between_model_turns_in_openjarviss_format(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("calculator", {"expression": "6*7"}, "call_1"))
    scripted.add_turn("It is ", "42.")
    agent = await made(http, backend, config={"tools": ["calculator"]})

    found = await send(http, agent["id"], "What is 6*7?", stream=True)

    events = [event for event, _ in found]
    assert events == ["tool_calls", "tool_result", "", "", "", ""]
    calls, result = found[0][1], found[1][1]
    assert calls["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "calculator", "arguments": '{"expression": "6*7"}'},
        }
    ]
    assert (result["tool_call_id"], result["tool"], result["result"]) == (
        "call_1",
        "calculator",
        "42",
    )
    assert result["success"] is True
    assert result["latency"] >= 0
    chunks = [ChatCompletionChunk.model_validate(data) for _, data in found[2:5]]
    assert [c.choices[0].delta.content for c in chunks[:2]] == ["It is ", "42."]
    assert [c.choices[0].finish_reason for c in chunks] == [None, None, "stop"]
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].model == backend.model
    assert chunks[2].usage is not None
    assert chunks[2].usage.total_tokens > 0
    assert found[-1] == ("", "[DONE]")
    # the tool's output went back to the model, whose second turn answered
    second = received(backend)[1]["messages"]
    assert second[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "42"}
    stored = await messages(http, agent["id"])
    assert [(m["direction"], m["content"]) for m in stored] == [
        ("user_to_agent", "What is 6*7?"),
        ("agent_to_user", "It is 42."),
    ]
    assert stored[1]["tool_calls"][0]["result"] == "42"
    assert (stored[1]["status"], stored[1]["stop_reason"]) == ("delivered", "final")
    totals = (await http.get(f"/managed-agents/{agent['id']}")).json()
    assert totals["total_tokens"] == chunks[2].usage.total_tokens


async def test_max_turns_ends_the_loop_and_the_stream(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    for _ in range(3):
        scripted.add_turn("Let me check. ", tool_call("think", {"thought": "again"}))
    agent = await made(http, backend, config={"tools": ["think"], "max_turns": 2})

    found = await send(http, agent["id"], "Loop", stream=True)

    assert len(received(backend)) == 2
    assert [e for e, _ in found].count("tool_result") == 2
    assert found[-2][1]["choices"][0]["finish_reason"] == "stop"
    assert found[-1][1] == "[DONE]"
    reply = (await messages(http, agent["id"]))[-1]
    assert reply["stop_reason"] == "max_turns"


async def test_each_message_sees_the_conversation_before_it(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Hello Ada.", "You are Ada.")
    agent = await made(http, backend, config={"instructions": "Be brief."})

    await send(http, agent["id"], "I am Ada.", stream=True)
    found = await send(http, agent["id"], "Who am I?", stream=True)

    assert contents(found) == ["You are Ada."]
    assert received(backend)[1]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I am Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "Who am I?"},
    ]


async def test_a_failure_mid_stream_is_an_error_frame_then_done(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("think", {"thought": "first"}))
    scripted.add_turn(raise_error(UpstreamError("the backend fell over", status=500)))
    agent = await made(http, backend, config={"tools": ["think"]})

    found = await send(http, agent["id"], "Go", stream=True)

    assert [e for e, _ in found] == ["tool_calls", "tool_result", "", ""]
    assert found[2][1]["error"]["type"] == "server_error"
    assert found[3][1] == "[DONE]"
    reply = (await messages(http, agent["id"]))[-1]
    assert (reply["status"], reply["stop_reason"]) == ("incomplete", "error")
    assert reply["tool_calls"][0]["tool"] == "think"


async def retired(
    http: httpx2.AsyncClient, backend: FakeBackend, settings: Settings
) -> dict[str, Any]:
    """An agent of a model served when it was made (by another server on the database) that
    this server does not serve."""
    (fake,) = settings.providers
    serving = fake.model_copy(update={"models": [backend.model, "retired-model"]})
    elsewhere = settings.model_copy(update={"providers": [serving]})
    async with audited_client(elsewhere) as other:
        agent = await made(other, backend, config={"model": "retired-model"})
    assert (await http.get(f"/managed-agents/{agent['id']}")).status_code == 200
    return agent


@pytest.mark.parametrize("model", ["no-such-model", FAKE_EMBEDDING_MODEL])
async def test_a_model_not_served_is_a_400_naming_the_models_served(
    http: httpx2.AsyncClient, backend: FakeBackend, model: str
) -> None:
    body = {"name": "x", "config": {"model": model}}
    created = error_of(await http.post("/managed-agents", json=body), 400)
    agent = await made(http, backend)
    changed = await http.patch(f"/managed-agents/{agent['id']}", json={"config": body["config"]})
    renamed = await http.patch(f"/managed-agents/{agent['id']}", json={"name": "y"})

    assert (created["param"], created["code"]) == ("config.model", "model_not_found")
    assert model in created["message"]
    assert f"the models served: {backend.model}." in created["message"]  # each once
    assert error_of(changed, 400) == created
    assert renamed.status_code == 200, renamed.text
    assert [a["name"] for a in (await http.get("/managed-agents")).json()["data"]] == ["y"]


async def test_a_model_no_longer_served_is_refused_before_anything_is_stored(
    http: httpx2.AsyncClient, backend: FakeBackend, settings: Settings
) -> None:
    agent = await retired(http, backend, settings)

    reply = await http.post(
        f"/managed-agents/{agent['id']}/messages", json={"content": "Hi", "stream": True}
    )

    assert error_of(reply, 404)["code"] == "model_not_found"
    assert await messages(http, agent["id"]) == []


async def test_file_read_reads_the_agents_workspace_and_nothing_outside(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel, settings: Settings
) -> None:
    agent = await made(http, backend, config={"tools": ["file_read"]})
    workspace = settings.managed_agents.directory / agent["id"] / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "notes.txt").write_text("the kettle boils at 100 degrees\n")
    secret = Path(settings.database.url.removeprefix("sqlite:///"))
    scripted.add_turn(
        tool_call("file_read", {"path": "notes.txt"}, "ok"),
        tool_call("file_read", {"path": "../../../../../../etc/passwd"}, "up"),
        tool_call("file_read", {"path": str(secret)}, "absolute"),
    )
    scripted.add_turn("Done.")

    found = await send(http, agent["id"], "Read", stream=True)

    results = {d["tool_call_id"]: d for e, d in found if e == "tool_result"}
    assert results["ok"]["success"]
    assert "kettle" in results["ok"]["result"]
    assert not results["up"]["success"]
    assert "root:" not in results["up"]["result"]
    assert not results["absolute"]["success"]


# --- queued messages and runs --------------------------------------------------------------


async def test_queued_messages_run_as_a_job_that_can_be_followed(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Both ", "noted.")
    agent = await made(http, backend)

    first = await send(http, agent["id"], "Buy milk.")
    await send(http, agent["id"], "Buy bread.")
    queued = (await http.post(f"/managed-agents/{agent['id']}/run")).json()
    followed = await http.get(f"/managed-agents/{agent['id']}/runs/{queued['id']}?stream=true")
    run = (await http.get(f"/managed-agents/{agent['id']}/runs/{queued['id']}")).json()
    later = await http.get(
        f"/managed-agents/{agent['id']}/runs/{run['id']}",
        params={"stream": "true", "starting_after": 1},
    )
    runs = (await http.get(f"/managed-agents/{agent['id']}/runs")).json()

    assert (first["status"], first["mode"], first["tool_calls"]) == ("pending", "queued", None)
    assert (queued["status"], queued["trigger"]) == ("queued", "manual")
    assert run["status"] == "completed"  # stored before the stream's [DONE]
    assert run["usage"]["total_tokens"] > 0
    assert [r["id"] for r in runs["data"]] == [run["id"]]
    assert contents(frames(followed.text)) == ["Both ", "noted."]
    assert frames(followed.text)[-1] == ("", "[DONE]")
    assert [e for e, _ in frames(later.text)] == ["", ""]  # the last chunk, then [DONE]
    sent = received(backend)[0]["messages"]
    assert [m["content"] for m in sent] == ["Buy milk.", "Buy bread."]
    stored = await messages(http, agent["id"])
    assert [(m["status"], m.get("run_id")) for m in stored] == [("delivered", run["id"])] * 3
    assert stored[2]["id"] == run["reply_id"]
    totals = (await http.get(f"/managed-agents/{agent['id']}")).json()
    assert (totals["total_runs"], totals["status"]) == (1, "idle")


async def test_a_run_is_followed_live_from_another_server_on_the_database(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel, settings: Settings
) -> None:
    scripted.add_turn("Working on it", delay(0.3), " - done.")
    agent = await made(http, backend)
    run = (await http.post(f"/managed-agents/{agent['id']}/run")).json()

    async with audited_client(settings) as other:  # another process would be the same
        await started_run(http, agent["id"], run["id"])
        path = f"/managed-agents/{agent['id']}/runs/{run['id']}"
        followed = frames((await other.get(path, params={"stream": "true"})).text)
        ended = (await other.get(path)).json()

    assert contents(followed) == ["Working on it", " - done."]
    assert followed[-1] == ("", "[DONE]")
    assert ended["status"] == "completed"


async def test_one_run_at_a_time_and_an_immediate_message_starts_one(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Working", delay(0.5), " done.")
    scripted.add_turn("Second run.")
    agent = await made(http, backend)

    message = await send(http, agent["id"], "Start", mode="immediate")
    busy = await http.post(f"/managed-agents/{agent['id']}/run")
    await started_run(http, agent["id"], message["run_id"])  # it took what was queued
    waiting = await send(http, agent["id"], "Meanwhile", mode="immediate")
    first = await settled_run(http, agent["id"], message["run_id"])
    second = (await http.post(f"/managed-agents/{agent['id']}/run")).json()
    second = await settled_run(http, agent["id"], second["id"])

    assert error_of(busy, 409)["code"] == "agent_busy"
    assert "run_id" not in waiting  # a run goes: the next one takes it
    assert (first["trigger"], first["status"]) == ("message", "completed")
    stored = {m["content"]: m for m in await messages(http, agent["id"])}
    assert stored["Meanwhile"]["run_id"] == second["id"]
    assert stored["Second run."]["run_id"] == second["id"]


async def test_a_failing_run_is_recorded_and_the_next_one_runs(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamError("the backend fell over", status=500)))
    scripted.add_turn("Back.")
    agent = await made(http, backend)
    path = f"/managed-agents/{agent['id']}"

    failed = await settled_run(http, agent["id"], (await http.post(f"{path}/run")).json()["id"])
    status = (await http.get(path)).json()["status"]
    followed = frames((await http.get(f"{path}/runs/{failed['id']}?stream=true")).text)
    again = await settled_run(http, agent["id"], (await http.post(f"{path}/run")).json()["id"])

    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "server_error"
    assert status == "error"
    assert "error" in followed[0][1]
    assert followed[-1] == ("", "[DONE]")
    assert again["status"] == "completed"
    assert (await http.get(path)).json()["status"] == "idle"


async def test_a_run_of_a_model_no_longer_served_fails_with_its_error(
    http: httpx2.AsyncClient, backend: FakeBackend, settings: Settings
) -> None:
    agent = await retired(http, backend, settings)

    run = (await http.post(f"/managed-agents/{agent['id']}/run")).json()
    run = await settled_run(http, agent["id"], run["id"])

    assert (run["status"], run["error"]["code"]) == ("failed", "model_not_found")


async def test_a_running_run_is_cancelled_and_its_stream_ends(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel, settings: Settings
) -> None:
    scripted.add_turn("Working on it", delay(5), " - never said.")
    scripted.add_turn("Next run.")
    agent = await made(http, backend)
    run = (await http.post(f"/managed-agents/{agent['id']}/run")).json()
    path = f"/managed-agents/{agent['id']}/runs/{run['id']}"
    await started_run(http, agent["id"], run["id"])

    async with audited_client(settings) as other:  # asked of another server on the database
        cancelled = await other.post(f"{path}/cancel")
    followed = frames((await http.get(path, params={"stream": "true"})).text)
    again = await http.post(f"{path}/cancel")
    after = (await http.post(f"/managed-agents/{agent['id']}/run")).json()
    after = await settled_run(http, agent["id"], after["id"])

    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert followed[-1] == ("", "[DONE]")
    assert " - never said." not in contents(followed)
    assert again.json() == cancelled.json()  # ended: returned as it is
    assert after["status"] == "completed"  # the agent is free again


async def test_unknown_runs_and_bad_cursors_are_errors(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    agent = await made(http, backend)
    path = f"/managed-agents/{agent['id']}"

    assert error_of(await http.get(f"{path}/runs/arun_missing"), 404)["param"] == "run_id"
    assert error_of(await http.post(f"{path}/runs/arun_missing/cancel"), 404)["param"] == "run_id"
    assert error_of(await http.post("/managed-agents/magent_missing/runs/arun_x/cancel"), 404)
    assert error_of(await http.get(f"{path}/runs", params={"after": "x"}), 404)["param"] == "after"
    assert (
        error_of(await http.get(f"{path}/messages", params={"after": "x"}), 404)["param"] == "after"
    )
    assert error_of(await http.post("/managed-agents/magent_missing/run"), 404)
    assert error_of(await http.post(f"{path}/messages", json={"content": ""}), 400)
    assert error_of(
        await http.post(f"{path}/messages", json={"content": "x", "mode": "later"}), 400
    )


# --- state and tasks -----------------------------------------------------------------------


async def test_an_operatives_state_and_ticks(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("remember", {"key": "city", "value": "Paris"}))
    scripted.add_turn("Noted: Paris.")
    agent = await made(http, backend, agent_type="operative")

    found = await send(http, agent["id"], "I live in Paris.", stream=True)
    state = (await http.get(f"/managed-agents/{agent['id']}/state")).json()

    assert contents(found) == ["Noted: Paris."]
    assert state["object"] == "managed_agent.state"
    assert state["state"] == {"city": "Paris", "last_result": "Noted: Paris."}
    assert [(t["number"], t["status"]) for t in state["ticks"]] == [(1, "ok")]
    assert state["history_messages"] == 4  # the tick's message, the call, its result, the answer
    assert [m["direction"] for m in state["messages"]] == ["agent_to_user", "user_to_agent"]
    assert state["agent"]["id"] == agent["id"]


async def test_the_default_monitor_operative_keeps_its_plan_and_memory_on_the_server(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    body = {"name": "watcher", "config": {"model": backend.model, "task": "Watch the logs."}}
    agent = (await http.post("/managed-agents", json=body)).json()  # echoes: no script

    found = await send(http, agent["id"], "Anything new?", stream=True)
    state = (await http.get(f"/managed-agents/{agent['id']}/state")).json()

    assert agent["agent_type"] == "monitor_operative"
    assert found[-1] == ("", "[DONE]")
    assert state["state"]["monitor.phased"]["phases"][0]["title"] == "Watch the logs."
    assert "monitor.causality_graph" in state["state"]
    assert [t["status"] for t in state["ticks"]] == ["ok"]


async def test_the_task_list(http: httpx2.AsyncClient, backend: FakeBackend) -> None:
    agent = await made(http, backend)
    path = f"/managed-agents/{agent['id']}/tasks"

    task = (await http.post(path, json={"description": "Find three sources"})).json()
    await http.post(path, json={"description": "Write it up", "status": "blocked"})
    changed = await http.patch(
        f"{path}/{task['id']}",
        json={"status": "in_progress", "progress": {"sources": 1}, "findings": ["a.org"]},
    )
    pending = (await http.get(path, params={"status": "in_progress"})).json()
    everything = (await http.get(path)).json()
    state = (await http.get(f"/managed-agents/{agent['id']}/state")).json()
    gone = (await http.delete(f"{path}/{task['id']}")).json()

    assert (task["object"], task["status"], task["progress"], task["findings"]) == (
        "managed_agent.task",
        "pending",
        {},
        [],
    )
    assert changed.json()["findings"] == ["a.org"]
    assert changed.json()["progress"] == {"sources": 1}
    assert [t["id"] for t in pending["tasks"]] == [task["id"]]
    assert len(everything["data"]) == 2
    assert everything["tasks"] == everything["data"]
    assert len(state["tasks"]) == 2
    assert gone["deleted"] is True
    assert error_of(await http.get(f"{path}/{task['id']}"), 404)["param"] == "task_id"


# --- schedules -----------------------------------------------------------------------------


async def test_a_schedule_ticks_and_a_failing_tick_does_not_stop_the_next(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamError("the backend fell over", status=500)))
    scripted.add_turn("Checked: all quiet.")
    schedule = {"schedule": {"type": "interval", "every": 1}, "task": "Check the logs."}
    agent = await made(http, backend, config=schedule)
    path = f"/managed-agents/{agent['id']}"

    runs: list[dict[str, Any]] = []
    for _ in range(100):  # ~1 s apart: the second tick comes within about 3 s
        runs = (await http.get(f"{path}/runs", params={"order": "asc"})).json()["data"]
        if [r["status"] for r in runs][:2] == ["failed", "completed"]:
            break
        await asyncio.sleep(0.05)
    await http.delete(path)  # no further ticks

    assert [(r["trigger"], r["status"]) for r in runs[:2]] == [
        ("schedule", "failed"),
        ("schedule", "completed"),
    ]
    assert received(backend)[1]["messages"][-1] == {"role": "user", "content": "Check the logs."}
