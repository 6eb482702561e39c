"""The sandboxed agent against children that misbehave: a runner of the tests' own starts a
small script in place of the real child, and the agent must refuse what it sends, cleanly."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import replace

import pytest

from agentloom.agents.sandbox_policy import RunnerName, SandboxSpec
from agentloom.agents.sandbox_runners import ContainerRunner, RunnerJob, RunSlots
from agentloom.agents.sandboxed import SandboxedAgent, SandboxRunError
from agentloom.errors import InvalidRequestError
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM
from agentloom.tools.sandbox import SandboxCommand
from tests.agents.code_agents import children

HEAD = "import json, sys\nstart = json.loads(sys.stdin.readline())\n"
SEND = "def send(m):\n    print(json.dumps(m), flush=True)\n"


class ScriptRunner:
    """Runs a Python script as the child, unsandboxed (the script is the tests' own)."""

    def __init__(self, script: str, max_concurrent: int | None = None) -> None:
        self.script = HEAD + SEND + script
        self.stopped: list[str] = []
        self.slots = RunSlots(max_concurrent)

    @property
    def name(self) -> RunnerName:
        return "bwrap"

    def prepare(self, job: RunnerJob) -> SandboxCommand:
        env = {"PATH": os.environ.get("PATH", "/usr/bin")}
        return SandboxCommand([sys.executable, "-c", self.script], job.workdir, env, _nothing)

    async def stop(self, job: RunnerJob) -> None:
        self.stopped.append(job.name)


def _nothing() -> None:
    return None


def _agent(script: str, model: ScriptedModel | None = None) -> SandboxedAgent:
    llm = LLM("m", provider=model or ScriptedModel())
    return SandboxedAgent(llm, SandboxSpec(), runner=ScriptRunner(script))


async def test_a_well_behaved_script_gets_the_payload_and_its_result_is_parsed() -> None:
    script = """
finished = {"type": "agent_finished", "result": {"content": json.dumps(start), "turns": 1}}
finished["result"]["usage"] = {"input_tokens": 3}
send({"op": "event", "event": finished})
"""
    llm = LLM("m", provider=ScriptedModel(), api_key="sk-stays-here")
    runner = ScriptRunner(script)
    agent = SandboxedAgent(llm, SandboxSpec(tools=("calculator",)), runner=runner, max_turns=4)
    result = await agent.run("Hi")
    start = json.loads(result.content)
    assert start["op"] == "start"
    payload = start["payload"]
    assert (payload["agent"], payload["tools"], payload["max_turns"]) == (
        "orchestrator",
        ["calculator"],
        4,
    )
    assert (payload["input"], payload["model"], payload["model_access"]) == ("Hi", "m", "proxy")
    assert payload["api_key"] is None  # proxy mode: the key never leaves this process
    assert "sk-stays-here" not in result.content
    assert result.usage.input_tokens == 3
    assert runner.stopped


@pytest.mark.parametrize(
    ("script", "error", "message"),
    [
        ("print('hello there', flush=True)", SandboxRunError, "a line that is not JSON"),
        ("send({'no': 'op'})", SandboxRunError, "a message without an op"),
        ("send({'op': 'nonsense'})", SandboxRunError, "an unexpected 'nonsense'"),
        (
            "send({'op': 'event', 'event': {'type': 'text_delta'}})",
            SandboxRunError,
            "an invalid event",
        ),
        (
            "sys.stderr.write('crashed'); sys.exit(3)",
            SandboxRunError,
            r"exit status 3\) before its result: crashed",
        ),
        (
            "send({'op': 'failed', 'error': {'kind': 'invalid_request', 'message': 'bad input'}})",
            InvalidRequestError,
            "bad input",
        ),
        (
            "send({'op': 'failed', 'error': {'message': 'boom', 'output': 'Traceback ...'}})",
            SandboxRunError,
            "boom; its output ended: Traceback ...",
        ),
        ("send({'op': 'model', 'id': 1, 'model': 'm'})", SandboxRunError, "a bad model call"),
    ],
)
async def test_what_a_child_sends_is_checked(
    script: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        await _agent(script).run("Hi")
    assert not children()


async def test_a_child_may_call_the_agents_model_only() -> None:
    script = """
send({"op": "model", "id": 7, "model": "other", "messages": [{"role": "user", "content": "x"}]})
reply = json.loads(sys.stdin.readline())
send({"op": "failed", "error": {"kind": "failed", "message": json.dumps(reply)}})
"""
    model = ScriptedModel(["never"])
    with pytest.raises(SandboxRunError) as caught:
        await _agent(script, model).run("Hi")
    reply = json.loads(caught.value.message)
    assert reply["op"] == "model_error"
    assert reply["id"] == 7
    assert reply["error"]["kind"] == "invalid_request"
    assert "may call model 'm' only" in reply["error"]["message"]
    assert not model.requests


# --- max_concurrent: a bound on the runner's runs at once -----------------------------------

HOLD = """
send({"op": "event", "event": {"type": "turn_started", "turn": 1}})
sys.stdin.readline()  # nothing more comes: the run holds its slot until it is closed
"""
DONE = """
send({"op": "event", "event": {"type": "agent_finished", "result": {"content": "done"}}})
"""


def _sharing(runner: ScriptRunner, script: str, wall: float) -> SandboxedAgent:
    spec = SandboxSpec(limits=replace(SandboxSpec().limits, wall_seconds=wall))
    agent = SandboxedAgent(LLM("m", provider=ScriptedModel()), spec, runner=runner)
    runner.script = HEAD + SEND + script
    return agent


async def test_runs_past_max_concurrent_wait_for_a_slot_until_their_deadline() -> None:
    runner = ScriptRunner(HOLD, max_concurrent=1)
    holding = _sharing(runner, HOLD, 60.0)
    events = holding.stream("hold")
    assert (await anext(events)).type == "turn_started"  # its child runs, in the only slot
    assert runner.slots.running == 1

    waiting = _sharing(runner, DONE, 0.5)
    with pytest.raises(SandboxRunError, match=r"no free slot of the bwrap runner \(at most 1"):
        await waiting.run("wait")
    assert runner.slots.running == 1  # the waiting run never started a child
    assert len(runner.stopped) == 0

    await events.aclose()  # the holding run ends: its child is killed, its slot freed
    assert runner.slots.running == 0
    assert (await _sharing(runner, DONE, 30.0).run("now")).content == "done"


async def test_a_waiting_run_starts_when_a_slot_frees() -> None:
    runner = ScriptRunner(HOLD, max_concurrent=1)
    holding = _sharing(runner, HOLD, 60.0)
    events = holding.stream("hold")
    await anext(events)
    waiting = asyncio.ensure_future(_sharing(runner, DONE, 30.0).run("next"))
    await asyncio.sleep(0)
    assert not waiting.done()

    await events.aclose()

    assert (await waiting).content == "done"


def test_max_concurrent_reaches_the_container_runner_and_must_be_positive() -> None:
    runner = ContainerRunner("docker", "img", "/usr/bin/docker", max_concurrent=2)
    assert runner.slots.limit == 2
    assert ContainerRunner("docker", "img", "/usr/bin/docker").slots.limit == 5
    with pytest.raises(InvalidRequestError, match="max_concurrent must be at least 1") as caught:
        ContainerRunner("podman", "img", "/usr/bin/podman", max_concurrent=0)
    assert caught.value.param == "max_concurrent"
