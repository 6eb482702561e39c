"""The sandboxed agent end to end in real bubblewrap: the inner agent runs in a child process,
its model calls come back to this process's (scripted) model or, with a network, go to a fake
backend over HTTP; events, results and errors cross the channel and are parsed back."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path

import pytest

from agentloom.agents import AgentFinished, AgentOptions, TextDelta, ToolFinished, ToolStarted
from agentloom.agents.base import AgentEvent, TurnStarted
from agentloom.agents.builders import UnknownNameError, build_agent
from agentloom.agents.sandbox_policy import AllowedRoot, Mount, MountAllowlist, SandboxSpec
from agentloom.agents.sandboxed import SandboxedAgent, SandboxRunError
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn, delay, raise_error, tool_call
from agentloom.llm import LLM, Message
from agentloom.testing.backend import FakeBackend
from agentloom.tools.sandbox import Limits
from tests.agents.code_agents import children, texts

pytestmark = pytest.mark.usefixtures("requires_sandbox")

LIMITS = Limits(wall_seconds=30.0, cpu_seconds=60, memory_bytes=2 << 30)


def _agent(model: ScriptedModel, spec: SandboxSpec, **kwargs: object) -> SandboxedAgent:
    return SandboxedAgent(LLM("m", provider=model), spec, **kwargs)  # type: ignore[arg-type]


def _scripted(*turns: Turn) -> ScriptedModel:
    return ScriptedModel(list(turns))


async def _events(agent: SandboxedAgent, input: str | list[Message]) -> list[AgentEvent]:
    return [event async for event in agent.stream(input)]


async def test_the_inner_agent_runs_its_tools_inside_and_its_model_calls_come_back() -> None:
    model = _scripted([tool_call("calculator", {"expression": "6 * 7"})], "It is 42.")
    spec = SandboxSpec(agent="orchestrator", tools=("calculator",), limits=LIMITS)
    events = await _events(_agent(model, spec, instructions="Be exact."), "What is 6 * 7?")
    kinds = [type(event) for event in events]
    assert kinds == [TurnStarted, ToolStarted, ToolFinished, TurnStarted, TextDelta, AgentFinished]
    finished = events[-1]
    assert isinstance(finished, AgentFinished)
    result = finished.result
    assert result.content == "It is 42."
    assert [(t.name, t.output, t.is_error) for t in result.tool_results] == [
        ("calculator", "42", False)
    ]
    assert result.turns == 2
    assert result.usage.model_calls == 2
    assert result.usage.input_tokens > 0
    assert result.metadata["sandbox"] == {
        "runner": "bwrap",
        "agent": "orchestrator",
        "network": False,
        "mounts": [],
    }
    assert texts(model.requests[0])[:2] == ["Be exact.", "What is 6 * 7?"]
    assert texts(model.requests[1])[-1] == "42"  # the tool ran in the child, told to the model
    assert not children()  # the child is gone


async def test_a_message_list_goes_in_and_the_conversation_comes_back() -> None:
    model = _scripted("Hello again.")
    history = [Message.user("Hi"), Message.assistant("Hello."), Message.user("Again?")]
    result = await _agent(model, SandboxSpec(agent="simple", limits=LIMITS)).run(history)
    assert texts(model.requests[0]) == ["Hi", "Hello.", "Again?"]
    assert [m.content for m in result.messages] == ["Hi", "Hello.", "Again?", "Hello again."]


async def test_a_result_larger_than_a_pipe_comes_back_whole() -> None:
    task = "x" * (2 << 20)  # the echoing model answers it: 2 MiB in, 2 MiB out, twice in messages
    result = await _agent(ScriptedModel(), SandboxSpec(agent="simple", limits=LIMITS)).run(task)
    assert result.content == task
    assert [m.content for m in result.messages] == [task, task]


async def test_a_code_agents_repl_runs_inside_the_sandbox() -> None:
    code = "import os\nprint(os.path.exists('/work'), os.getcwd().startswith('/mnt/data'))"
    model = _scripted(f"```python\n{code}\nFINAL(6 * 7)\n```")
    result = await _agent(model, SandboxSpec(agent="codeact", limits=LIMITS)).run("6 * 7?")
    assert result.content == "42"
    assert result.tool_results[0].output.startswith("stdout:\nFalse True\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An allowed root holding a project (readable by the sandbox's user, as root) and a
    sibling folder that is never mounted."""
    root = tmp_path / "projects"
    (root / "demo").mkdir(parents=True)
    (root / "demo" / "data.txt").write_text("3 4 5")
    (root / "private").mkdir()
    (root / "private" / "notes.txt").write_text("not mounted")
    for path in (tmp_path, root, root / "demo"):
        path.chmod(0o755)
    return root


async def test_a_mounted_workspace_is_where_the_file_tools_work(project: Path) -> None:
    model = _scripted(
        [
            tool_call("file_read", {"path": "data.txt"}),
            tool_call("file_read", {"path": "../private/notes.txt"}),
        ],
        "Read it.",
    )
    spec = SandboxSpec(
        agent="orchestrator",
        tools=("file_read",),
        mounts=(Mount(project / "demo"),),
        allowlist=MountAllowlist((AllowedRoot(project),)),
        workspace=project / "demo",
        limits=LIMITS,
    )
    result = await _agent(model, spec).run("Read data.txt")
    inside, outside = result.tool_results
    assert inside.output.endswith("3 4 5")
    assert outside.is_error  # outside the workspace (and not mounted either)
    assert result.metadata["sandbox"]["mounts"] == [str((project / "demo").resolve())]  # type: ignore[index]


async def test_a_refused_mount_is_an_invalid_request_when_the_agent_is_made(
    project: Path,
) -> None:
    options = AgentOptions(
        sandbox=SandboxSpec(
            mounts=(Mount(project / "demo"), Mount("/etc")),
            allowlist=MountAllowlist((AllowedRoot(project),)),
        )
    )
    with pytest.raises(InvalidRequestError, match="mount '/etc' refused"):
        build_agent("sandboxed", LLM("m", provider=ScriptedModel()), (), options)


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        (SandboxSpec(agent="nope"), UnknownNameError, "cannot sandbox agent 'nope'"),
        (SandboxSpec(agent="sandboxed"), UnknownNameError, "cannot sandbox agent 'sandboxed'"),
        (SandboxSpec(tools=("nope",)), UnknownNameError, "unknown: 'nope'"),
        (SandboxSpec(model_access="direct"), InvalidRequestError, "needs allow_network=True"),
        (
            SandboxSpec(model_access="direct", allow_network=True),
            InvalidRequestError,
            "needs an LLM with a base_url",
        ),
        (SandboxSpec(workspace="/srv"), InvalidRequestError, "is not one of the mounts"),
    ],
)
def test_caller_mistakes_are_invalid_requests_when_the_agent_is_made(
    spec: SandboxSpec, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build_agent("sandboxed", LLM("m", provider=ScriptedModel()), (), AgentOptions(sandbox=spec))


async def test_tools_given_by_the_builder_are_rebuilt_inside_by_name() -> None:
    from agentloom.agents.tools.calculator import CalculatorTool

    model = _scripted([tool_call("calculator", {"expression": "2 + 2"})], "4")
    llm = LLM("m", provider=model)
    options = AgentOptions(max_turns=3, sandbox=SandboxSpec(limits=LIMITS))
    agent = build_agent("sandboxed", llm, [CalculatorTool()], options)
    assert isinstance(agent, SandboxedAgent)
    assert agent.spec.tools == ("calculator",)
    result = await agent.run("2 + 2?")
    assert result.tool_results[0].output == "4"


async def test_a_model_error_reaches_the_caller_as_itself() -> None:
    model = _scripted([raise_error(UpstreamError("the backend is down", status=503))])
    with pytest.raises(UpstreamError, match="the backend is down") as caught:
        await _agent(model, SandboxSpec(agent="simple", limits=LIMITS)).run("Hi")
    assert caught.value.status == 503
    assert not children()


async def test_an_error_inside_the_child_is_reported_not_hidden() -> None:
    spec = SandboxSpec(agent="simple", tools=("calculator",), limits=LIMITS)
    with pytest.raises(InvalidRequestError, match="the simple agent uses no tools"):
        await _agent(ScriptedModel(), spec).run("Hi")


async def test_a_runaway_child_gets_no_more_model_calls_than_allowed() -> None:
    model = ScriptedModel(lambda request: [tool_call("calculator", {"expression": "1"})])
    spec = SandboxSpec(tools=("calculator",), max_model_calls=2, limits=LIMITS)
    with pytest.raises(InvalidRequestError, match="used up its 2 model calls"):
        await _agent(model, spec, max_turns=10).run("Loop")
    assert len(model.requests) == 2


async def test_the_wall_clock_bounds_the_whole_run_and_the_child_is_killed() -> None:
    model = _scripted([delay(30), "too late"])
    spec = SandboxSpec(agent="simple", limits=Limits(wall_seconds=1.0))
    with pytest.raises(SandboxRunError, match="did not finish within 1 s"):
        await _agent(model, spec).run("Hi")
    assert not children()


def _scratches(folder: Path) -> list[Path]:
    return list(folder.glob("agentloom-sandboxed-*"))


async def test_a_consumer_that_closes_the_stream_early_leaves_no_child_and_no_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the scratch folder is made
    model = _scripted([tool_call("calculator", {"expression": "1"})], [delay(30), "late"])
    agent = _agent(model, SandboxSpec(tools=("calculator",), limits=LIMITS))
    async with aclosing(agent.stream("Go")) as events:
        async for event in events:
            if isinstance(event, ToolFinished):
                assert _scratches(tmp_path)
                break
    assert not children()
    assert not _scratches(tmp_path)


class _HeaderRecorder:
    """The fake backend's app, recording each request's Authorization header."""

    def __init__(self, backend: FakeBackend) -> None:
        self.app = backend.app
        self.authorization: list[str] = []

    async def __call__(self, scope: dict[str, object], receive: object, send: object) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])  # type: ignore[call-overload]
            self.authorization.append(headers.get(b"authorization", b"").decode())
        await self.app(scope, receive, send)  # type: ignore[arg-type]


def _descendants() -> list[int]:
    """Every process under this one (the runner's and the child's)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [Path("/proc/self").resolve().name]
    while frontier:
        pid = int(frontier.pop())
        kids = [child for child, parent in parents.items() if parent == pid]
        found += kids
        frontier += [str(kid) for kid in kids]
    return found


@pytest.fixture
def recorded_backend() -> Iterator[tuple[FakeBackend, _HeaderRecorder]]:
    fake = FakeBackend(ScriptedModel())
    recorder = _HeaderRecorder(fake)
    fake.app = recorder  # type: ignore[assignment]
    with fake.serve():
        yield fake, recorder


async def test_direct_mode_gets_the_key_in_its_payload_never_its_environment_or_arguments(
    recorded_backend: tuple[FakeBackend, _HeaderRecorder],
) -> None:
    backend, recorder = recorded_backend
    secret = "sk-sandbox-secret-4242"
    seen: list[bool] = []

    def respond(request: ChatRequest) -> Turn:
        """Runs while the child waits for this answer: look at every process under the test."""
        for pid in _descendants():
            for name in ("environ", "cmdline"):
                try:
                    seen.append(secret.encode() in Path(f"/proc/{pid}/{name}").read_bytes())
                except OSError:
                    continue
        return "Direct answer."

    backend.provider = ScriptedModel(respond)
    llm = LLM(backend.model, base_url=backend.base_url, api_key=secret, path="completions")
    spec = SandboxSpec(agent="simple", allow_network=True, model_access="direct", limits=LIMITS)
    result = await SandboxedAgent(llm, spec).run("Hi")
    assert result.content == "Direct answer."
    assert recorder.authorization == [f"Bearer {secret}"]  # the child used the payload's key
    assert seen  # the runner and the child were looked at ...
    assert not any(seen)  # ... and the key was in no environment and no command line
    await llm.aclose()
