"""``agentloom agents create/list/send/run/logs`` against a server on a real socket (each command
in a thread, as a separate run of the command line would be), and the SDK client they use."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner, Result

from agentloom.agents.managed_client import ManagedAgents, reply_text
from agentloom.agents.remote import ManagedAgents as Exported
from agentloom.api.managed_agent_stream import ToolCallsEvent, ToolResultEvent
from agentloom.api.managed_agents import DEFAULT_AGENT_TYPE
from agentloom.cli.main import main
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, delay, raise_error, tool_call
from agentloom.testing.backend import FakeBackend


async def agentloom(url: str, *args: str) -> Result:
    runner = CliRunner(env={"AGENTLOOM_BASE_URL": url, "AGENTLOOM_API_KEY": None})
    return await asyncio.to_thread(runner.invoke, main, ["agents", *args])


async def test_create_list_send_run_and_logs(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turn(tool_call("calculator", {"expression": "6*7"}))
    scripted.add_turn("It is ", "42.")
    scripted.add_turn("Milk noted.")

    made = await agentloom(
        live_url, "create", "helper", "--type", "orchestrator", "--tools", "calculator"
    )
    agent_id = made.output.strip()
    listed = await agentloom(live_url, "list")
    sent = await agentloom(live_url, "send", agent_id, "What is 6*7?")
    queued = await agentloom(live_url, "send", agent_id, "Buy milk.", "--queue")
    ran = await agentloom(live_url, "run", agent_id, "--follow")
    logs = await agentloom(live_url, "logs", agent_id)

    assert made.exit_code == 0, made.output
    assert agent_id.startswith("magent_")
    assert listed.output == f"{agent_id}  orchestrator  idle  helper\n"
    assert sent.exit_code == 0, sent.output
    assert sent.stdout == "It is 42.\n"
    assert sent.stderr.splitlines() == ['[calculator] {"expression": "6*7"}', "[calculator] -> 42"]
    assert queued.output.startswith("amsg_")
    assert (ran.exit_code, ran.stdout) == (0, "Milk noted.\n")
    run_line, *conversation = logs.output.splitlines()
    assert run_line.startswith("run arun_")
    assert run_line.endswith("  manual  completed")
    assert conversation == [
        "you: What is 6*7?",
        '  [calculator] {"expression": "6*7"} -> 42',
        "agent: It is 42.",
        "you: Buy milk.",
        "agent: Milk noted.",
    ]


async def test_without_type_an_agent_is_the_servers_default_type(live_url: str) -> None:
    made = await agentloom(live_url, "create", "plain")
    listed = await agentloom(live_url, "list")

    assert made.exit_code == 0, made.output
    assert listed.output == f"{made.output.strip()}  {DEFAULT_AGENT_TYPE}  idle  plain\n"


async def test_the_cli_says_what_the_server_refused(live_url: str, backend: FakeBackend) -> None:
    unknown_model = await agentloom(live_url, "create", "x", "--model", "no-such-model")
    unknown_tool = await agentloom(live_url, "create", "x", "--tools", "shell_exec")
    unknown_agent = await agentloom(live_url, "send", "magent_missing", "Hi")
    unreachable = await asyncio.to_thread(
        CliRunner(env={"AGENTLOOM_BASE_URL": "http://127.0.0.1:9/v1"}).invoke,
        main,
        ["agents", "list"],
    )

    assert unknown_model.exit_code == 1
    assert "400" in unknown_model.output
    assert "no-such-model" in unknown_model.output
    assert backend.model in unknown_model.output  # the models served
    assert unknown_tool.exit_code == 1
    assert "400" in unknown_tool.output
    assert "shell_exec" in unknown_tool.output
    assert unknown_agent.exit_code == 1
    assert "404" in unknown_agent.output
    assert unreachable.exit_code == 1
    assert "cannot reach" in unreachable.output


@pytest.mark.both_databases
async def test_the_sdk_client(scripted: ScriptedModel, backend: FakeBackend, live_url: str) -> None:
    scripted.add_turn(tool_call("think", {"thought": "hm"}))
    scripted.add_turn("Done.")
    scripted.add_turn(raise_error(UpstreamError("down", status=500)))

    async with ManagedAgents(live_url) as agents:
        agent = await agents.create("sdk", agent_type="orchestrator", tools=["think"])
        events = [event async for event in agents.stream(agent.id, "Think.")]
        with pytest.raises(UpstreamError):
            async for _ in agents.stream(agent.id, "Again."):
                pass
        state = await agents.state(agent.id)
        renamed = await agents.update(agent.id, name="renamed")
        task = await agents.add_task(agent.id, "Find sources")
        gone = await agents.delete(agent.id)

    assert Exported is ManagedAgents  # agentloom.agents.remote gained it
    assert reply_text(events) == "Done."
    assert [type(e) for e in events[:2]] == [ToolCallsEvent, ToolResultEvent]
    # newest first; the failed turn said nothing: no reply of it is stored
    assert [m.content for m in state.messages] == ["Again.", "Done.", "Think."]
    assert renamed.name == "renamed"
    assert task.description == "Find sources"
    assert gone.deleted


async def test_a_run_is_cancelled_from_the_sdk_and_the_cli(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turn("Working", delay(5), " - never said.")
    scripted.add_turn("Working", delay(5), " - never said.")
    async with ManagedAgents(live_url) as agents:
        agent = await agents.create("slow", agent_type="simple")
        first = await agents.run(agent.id)
        await _started(agents, agent.id, first.id)
        cancelled = await agents.cancel_run(agent.id, first.id)
        second = await agents.run(agent.id)
        await _started(agents, agent.id, second.id)
        said = await agentloom(live_url, "cancel", agent.id, second.id)
        again = await agents.cancel_run(agent.id, first.id)

    assert cancelled.status == "cancelled"
    assert (said.exit_code, said.output.strip()) == (0, "cancelled")
    assert again == cancelled  # ended: returned as it is


async def _started(agents: ManagedAgents, agent_id: str, run_id: str) -> None:
    for _ in range(300):
        if (await agents.get_run(agent_id, run_id)).status != "queued":
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"run {run_id} never started")
