"""``sandboxed``: any agent of the table, run in an isolated child process.

```python
spec = SandboxSpec(
    agent="orchestrator", tools=("calculator", "file_read"),
    mounts=(Mount("/srv/projects/demo"),),
    allowlist=MountAllowlist((AllowedRoot("/srv/projects"),)),
    workspace="/srv/projects/demo",
)
agent = SandboxedAgent(llm, spec, instructions="Be brief.")
result = await agent.run("Sum the numbers in data.txt")
```

The child (:mod:`agentloom.agents._sandboxed_child`) runs in the spec's runner
(:mod:`agentloom.agents.sandbox_runners`: bubblewrap by default, Docker or Podman), sees only
the mounts the allowlist passed (:mod:`agentloom.agents.sandbox_policy`, checked when the agent
is made), a scratch directory (removed after the run) and no network unless the spec allows it.
Its payload (task, agent, options; the API key only in ``direct`` mode) goes in on its stdin;
its events come back on its stdout, are validated, and are this agent's events. In ``proxy``
mode (the default) the child's model calls come back the same way and this agent's LLM makes
them (its model only, at most ``max_model_calls`` per run). The spec's wall clock bounds the
whole run: past it the child is killed and the run fails.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from dataclasses import replace
from pathlib import Path

from agentloom.agents._repl_process import BrokenChannel, Child, Message
from agentloom.agents.base import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    AgentInput,
    BaseAgent,
    MemoryResult,
)
from agentloom.agents.sandbox_policy import CheckedMount, SandboxSpec, check_mounts
from agentloom.agents.sandbox_runners import NoFreeSlot, Runner, RunnerJob, build_runner
from agentloom.agents.sandbox_wire import (
    ModelCall,
    SandboxPayload,
    SandboxRunError,
    WireMemory,
    decode_agent_event,
    decode_model_call,
    encode_llm_event,
    error_from_json,
    error_to_json,
    input_to_json,
)
from agentloom.errors import AgentloomError, InvalidRequestError
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import LLMEvent

__all__ = ["SandboxRunError", "SandboxedAgent"]


class SandboxedAgent(BaseAgent):
    """Runs ``spec.agent`` (with ``spec.tools``) in the spec's runner; see the module doc.

    ``runner`` replaces the spec's (tests, or a runner of your own)."""

    name = "sandboxed"
    description = "Runs another agent in an isolated runner (bubblewrap, Docker or Podman)."

    def __init__(
        self,
        llm: LLM,
        spec: SandboxSpec,
        *,
        instructions: str | None = None,
        max_turns: int = 10,
        runner: Runner | None = None,
    ) -> None:
        super().__init__(llm, instructions=instructions)
        _check_spec(spec, llm)
        self.spec = spec
        self.max_turns = max_turns
        self.mounts = check_mounts(spec.mounts, spec.allowlist)
        self.workspace = _workspace(spec, self.mounts)
        self.runner = runner if runner is not None else build_runner(spec)

    async def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        context = context or AgentContext()
        deadline = asyncio.get_running_loop().time() + self.spec.limits.wall_seconds
        async with self._slot(deadline), self._child() as child:
            await child.send({"op": "start", "payload": self._payload(input, context)})
            model_calls = 0
            while True:
                message = await self._receive(child, deadline)
                if message["op"] == "model":
                    model_calls += 1
                    await self._serve_model(child, message, model_calls, deadline)
                    continue
                event = self._event(message)
                if isinstance(event, AgentFinished):
                    yield AgentFinished(replace(event.result, metadata=self._metadata(event)))
                    return
                yield event

    # --- the child ---------------------------------------------------------------------------

    @asynccontextmanager
    async def _slot(self, deadline: float) -> AsyncIterator[None]:
        """One of the runner's slots, waited for until the run's deadline."""
        try:
            async with self.runner.slots.hold(deadline):
                yield
        except NoFreeSlot as exc:
            raise SandboxRunError(
                f"no free slot of the {self.runner.name} runner (at most {exc.limit} runs at "
                f"once) within the run's {self.spec.limits.wall_seconds:g} s"
            ) from None

    @asynccontextmanager
    async def _child(self) -> AsyncIterator[Child]:
        """The child, started in a scratch directory; killed and cleaned up after."""
        workdir = Path(tempfile.mkdtemp(prefix="agentloom-sandboxed-"))
        job = RunnerJob(
            name=f"agentloom-sandboxed-{secrets.token_hex(6)}",
            workdir=workdir,
            mounts=self.mounts,
            network=self.spec.allow_network,
            limits=self.spec.limits,
        )
        try:
            child = await Child.spawn(self.runner.prepare(job))
        except OSError as exc:
            await asyncio.to_thread(shutil.rmtree, workdir, True)
            raise SandboxRunError(f"the {self.runner.name} runner could not start: {exc}") from exc
        try:
            yield child
        finally:
            await child.kill()
            await self.runner.stop(job)
            await asyncio.to_thread(shutil.rmtree, workdir, True)

    def _payload(self, input: AgentInput, context: AgentContext) -> JSONValue:
        direct = self.spec.model_access == "direct"
        payload = SandboxPayload(
            agent=self.spec.agent,
            tools=list(self.spec.tools),
            instructions=self.instructions,
            max_turns=self.max_turns,
            input=input_to_json(input),
            session_id=context.session_id,
            metadata=dict(context.metadata),
            memory_results=[_wire_memory(result) for result in context.memory_results],
            workspace=self.workspace,
            model=self.llm.model,
            model_access=self.spec.model_access,
            path=self.llm.path if direct else None,
            base_url=self.llm.base_url if direct else None,
            api_key=self.llm.api_key if direct else None,
        )
        dumped: JSONValue = payload.model_dump(mode="json")
        return dumped

    async def _receive(self, child: Child, deadline: float) -> Message:
        try:
            async with asyncio.timeout_at(deadline):
                message = await child.receive()
        except TimeoutError:
            raise self._timed_out() from None
        except BrokenChannel as exc:
            raise SandboxRunError(f"the sandboxed agent sent {exc}") from None
        if message is None:
            stderr = await child.kill()
            raise SandboxRunError(
                f"the sandboxed agent's process ended ({child.describe_exit()}) before its "
                f"result: {stderr.strip()}".rstrip(": ")
            )
        return message

    def _event(self, message: Message) -> AgentEvent:
        """An ``event`` message's event; a ``failed`` message's error, raised."""
        if message["op"] == "failed":
            raise error_from_json(message.get("error"))
        if message["op"] != "event":
            raise SandboxRunError(f"the sandboxed agent sent an unexpected {message['op']!r}")
        try:
            return decode_agent_event(message.get("event"))
        except ValueError as exc:
            raise SandboxRunError(f"the sandboxed agent sent an invalid event: {exc}") from None

    def _metadata(self, finished: AgentFinished) -> dict[str, JSONValue]:
        sandbox: dict[str, JSONValue] = {
            "runner": self.runner.name,
            "agent": self.spec.agent,
            "network": self.spec.allow_network,
            "mounts": [mount.target for mount in self.mounts],
        }
        return {**finished.result.metadata, "sandbox": sandbox}

    def _timed_out(self) -> SandboxRunError:
        seconds = self.spec.limits.wall_seconds
        return SandboxRunError(f"the sandboxed run did not finish within {seconds:g} s")

    # --- model calls (proxy mode) ------------------------------------------------------------

    async def _serve_model(
        self, child: Child, message: Message, count: int, deadline: float
    ) -> None:
        """Make the model call the child asked for, sending back its events or its error."""
        call = _model_call(message)
        try:
            self._allow(call, count)
            async with asyncio.timeout_at(deadline):
                async with aclosing(self._model_events(call)) as events:
                    async for event in events:
                        encoded = encode_llm_event(event)
                        await child.send({"op": "model_event", "id": call.id, "event": encoded})
        except TimeoutError:
            raise self._timed_out() from None
        except AgentloomError as exc:
            await child.send({"op": "model_error", "id": call.id, "error": error_to_json(exc)})
            return
        await child.send({"op": "model_done", "id": call.id})

    def _allow(self, call: ModelCall, count: int) -> None:
        if self.spec.model_access != "proxy":
            raise InvalidRequestError("this sandboxed agent calls its model itself (direct mode)")
        if count > self.spec.max_model_calls:
            raise InvalidRequestError(
                f"the sandboxed agent used up its {self.spec.max_model_calls} model calls"
            )
        if call.model != self.llm.model:
            raise InvalidRequestError(f"the sandboxed agent may call model {self.llm.model!r} only")

    def _model_events(self, call: ModelCall) -> AsyncGenerator[LLMEvent, None]:
        messages, tools, options = call.messages, call.tools, call.options
        if call.path == "completions":
            return self.llm.stream_completion(messages, tools, options=options)
        if call.path == "responses":
            return self.llm.stream_responses(messages, tools, options=options)
        return self.llm.stream(messages, tools, options=options)


def _model_call(message: Message) -> ModelCall:
    try:
        return decode_model_call(message)
    except ValueError as exc:
        raise SandboxRunError(f"the sandboxed agent sent a bad model call: {exc}") from None


def _check_spec(spec: SandboxSpec, llm: LLM) -> None:
    """The spec's caller mistakes, as ``InvalidRequestError`` when the agent is made."""
    from agentloom.agents.builders import AGENTS, TOOLS, UnknownNameError

    if spec.agent not in AGENTS or spec.agent == SandboxedAgent.name:
        known = ", ".join(sorted(name for name in AGENTS if name != SandboxedAgent.name))
        raise UnknownNameError(f"cannot sandbox agent {spec.agent!r}; agents: {known}")
    unknown = [name for name in spec.tools if name not in TOOLS]
    if unknown:
        raise UnknownNameError(
            f"sandboxed tools are built in the sandbox from the tool table; unknown: "
            f"{', '.join(map(repr, unknown))}; known tools: {', '.join(sorted(TOOLS))}"
        )
    if spec.model_access == "direct" and not spec.allow_network:
        raise InvalidRequestError("model_access 'direct' needs allow_network=True")
    if spec.model_access == "direct" and llm.base_url is None:
        raise InvalidRequestError("model_access 'direct' needs an LLM with a base_url")
    if spec.max_model_calls < 1:
        raise InvalidRequestError("max_model_calls must be at least 1")


def _workspace(spec: SandboxSpec, mounts: tuple[CheckedMount, ...]) -> str | None:
    """The inner agent's workspace: one of the mounts (by the path given or its real path)."""
    if spec.workspace is None:
        return None
    wanted = Path(spec.workspace)
    for mount, given in zip(mounts, spec.mounts, strict=True):
        if wanted in (mount.source, Path(given.path)):
            return mount.target
    raise InvalidRequestError(f"the workspace {str(wanted)!r} is not one of the mounts")


def _wire_memory(result: MemoryResult | str) -> WireMemory:
    if isinstance(result, str):
        return WireMemory(content=result)
    return WireMemory(content=result.content, source=result.source, score=result.score)
