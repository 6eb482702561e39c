"""The child side of :class:`agentloom.agents.sandboxed.SandboxedAgent`, run inside the runner
as ``python -s -m agentloom.agents._sandboxed_child``.

It reads the ``start`` payload from its stdin, builds the inner agent from the agent table (its
tools by name, working in the scratch directory or the mount it was given), and streams the
agent's events back as JSON lines (:mod:`agentloom.agents.sandbox_wire`). In ``proxy`` mode its
LLM is a :class:`ChannelLLM`: every model call goes to the host over the same channel, so the
child needs no network and never sees the API key; in ``direct`` mode it calls the endpoint
named in the payload with the key given there.

Before anything runs the channel moves to private descriptors: descriptor 0 becomes
``/dev/null`` and 1 and 2 a scratch file, so nothing the agent or a tool prints (or a
subprocess writes) can reach the channel; the scratch file's tail comes back with a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path as FilePath
from typing import IO

from agentloom.agents._repl_process import run_nested
from agentloom.agents.base import AgentContext, BaseAgent, MemoryResult
from agentloom.agents.builders import AgentOptions, build_agent, build_tools
from agentloom.agents.sandbox_wire import (
    ModelCall,
    SandboxPayload,
    decode_llm_event,
    encode_agent_event,
    encode_model_call,
    error_from_json,
    error_to_json,
    input_from_json,
)
from agentloom.agents.tools.base import ToolEnvironment
from agentloom.json_types import JSONObject
from agentloom.llm.client import LLM
from agentloom.llm.options import CallOptions
from agentloom.llm.state import ConversationState, LLMStateError
from agentloom.llm.types import FunctionTool, LLMEvent, Message, Path

MESSAGE_BYTES = 256 << 20  # the longest line the host may send
OUTPUT_TAIL = 4000  # characters of the scratch output sent back with a failure


class Channel:
    """This process's end of the JSON-lines channel to the host, on private descriptors."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._calls: dict[int, asyncio.Queue[JSONObject]] = {}

    @classmethod
    async def open(cls, read_fd: int, write_fd: int) -> Channel:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MESSAGE_BYTES)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb", 0)
        )
        return cls(reader, asyncio.StreamWriter(transport, protocol, None, loop))

    def send(self, message: JSONObject) -> None:
        """Queue ``message`` on the pipe's transport: never blocks, so the channel keeps
        being read while the host is busy writing to it."""
        self._writer.write(json.dumps(message).encode() + b"\n")

    async def receive(self) -> JSONObject | None:
        line = await self._reader.readline()
        if not line:
            return None
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError("the host sent a line that is not a JSON object")
        return message

    async def dispatch(self) -> None:
        """Hand the host's answers to the model calls waiting for them; when the host goes
        away there is no one to run for, and the process ends."""
        while (message := await self.receive()) is not None:
            call_id = message.get("id")
            queue = self._calls.get(call_id) if isinstance(call_id, int) else None
            if queue is not None:
                queue.put_nowait(message)
        os._exit(0)

    async def model_call(self, call: ModelCall) -> AsyncGenerator[LLMEvent, None]:
        queue: asyncio.Queue[JSONObject] = asyncio.Queue()
        self._calls[call.id] = queue
        try:
            self.send(encode_model_call(call))
            while True:
                message = await queue.get()
                if message.get("op") == "model_done":
                    return
                if message.get("op") == "model_error":
                    raise error_from_json(message.get("error"))
                yield decode_llm_event(message.get("event"))
        finally:
            del self._calls[call.id]

    def next_id(self) -> int:
        return next(self._ids)

    async def close(self) -> None:
        """Close the channel once everything queued on it is written (the result may be more
        than the pipe holds: the process must not end before the host has read it)."""
        self._writer.transport.set_write_buffer_limits(high=0)  # drain() waits for it all
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()
        self._writer.close()


class ChannelLLM(LLM):
    """An LLM whose every call is made by the host (``proxy`` mode): the request goes out on
    the channel, the host's events come back. Routing is the host's LLM's."""

    def __init__(self, channel: Channel, model: str, path: Path | None = None) -> None:
        super().__init__(model, path=path)
        self._channel = channel
        self._forced = path

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        return self._call(self._forced, messages, tools, state, options)

    def stream_completion(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        return self._call("completions", messages, tools, state, options)

    def stream_responses(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        return self._call("responses", messages, tools, state, options)

    def with_model(self, model: str, *, path: Path | None = None) -> LLM:
        return ChannelLLM(self._channel, model, path)

    async def _call(
        self,
        path: Path | None,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool],
        state: ConversationState | None,
        options: CallOptions | None,
    ) -> AsyncGenerator[LLMEvent, None]:
        if state is not None and state.stateful:
            raise LLMStateError("a sandboxed agent's model calls are stateless")
        call = ModelCall(
            self._channel.next_id(), self.model, tuple(messages), tuple(tools), options, path
        )
        async with contextlib.aclosing(self._channel.model_call(call)) as events:
            async for event in events:
                yield event


# --- the run ---------------------------------------------------------------------------------


def _llm(payload: SandboxPayload, channel: Channel) -> LLM:
    if payload.model_access == "proxy":
        return ChannelLLM(channel, payload.model)
    return LLM(payload.model, base_url=payload.base_url, api_key=payload.api_key, path=payload.path)


@asynccontextmanager
async def _agent(payload: SandboxPayload, channel: Channel) -> AsyncIterator[BaseAgent]:
    """The inner agent; its LLM and tools are closed after."""
    home = FilePath.cwd()
    environment = ToolEnvironment(
        workspace=_workspace(payload),
        data_dir=home / ".agentloom",
        session_id=payload.session_id or "default",
    )
    tools = build_tools(payload.tools, environment)
    llm = _llm(payload, channel)
    options = AgentOptions(payload.instructions, payload.max_turns, home / ".agentloom")
    try:
        yield build_agent(payload.agent, llm, tools, options)
    finally:
        try:
            await llm.aclose()
        finally:
            for tool in tools:
                await tool.aclose()


def _workspace(payload: SandboxPayload) -> FilePath:
    return FilePath(payload.workspace) if payload.workspace else FilePath.cwd()


def _context(payload: SandboxPayload) -> AgentContext:
    return AgentContext(
        session_id=payload.session_id,
        workspace=_workspace(payload),
        metadata=dict(payload.metadata),
        memory_results=[MemoryResult(m.content, m.source, m.score) for m in payload.memory_results],
    )


async def _payload(channel: Channel) -> SandboxPayload:
    start = await channel.receive()
    if start is None or start.get("op") != "start":
        raise ValueError("the host did not start with a payload")
    return SandboxPayload.model_validate(start.get("payload"))


async def _run(payload: SandboxPayload, channel: Channel) -> None:
    async with _agent(payload, channel) as agent:
        events = agent.stream(input_from_json(payload.input), _context(payload))
        async with contextlib.aclosing(events) as stream:
            async for event in stream:
                channel.send({"op": "event", "event": encode_agent_event(event)})


async def _serve(read_fd: int, write_fd: int, scratch: IO[bytes]) -> None:
    channel = await Channel.open(read_fd, write_fd)
    dispatcher: asyncio.Task[None] | None = None
    try:
        payload = await _payload(channel)
        dispatcher = asyncio.create_task(channel.dispatch())
        await _run(payload, channel)
    except Exception as exc:  # the process boundary: every failure is reported, not hidden
        error = error_to_json(exc)
        error["output"] = _tail(scratch)
        channel.send({"op": "failed", "error": error})
    finally:
        if dispatcher is not None:
            dispatcher.cancel()
        await channel.close()


def _tail(scratch: IO[bytes]) -> str:
    with contextlib.suppress(OSError, ValueError):
        scratch.seek(0, os.SEEK_END)
        size = scratch.tell()
        scratch.seek(max(0, size - OUTPUT_TAIL))
        return scratch.read().decode("utf-8", "replace")
    return ""


def _private_channel() -> tuple[int, int, IO[bytes]]:
    """Move the channel off descriptors 0 and 1 (see the module doc)."""
    read_fd, write_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        scratch: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - for the process's life
    except OSError:  # nowhere to write: stray output is dropped
        scratch = open(os.devnull, "w+b")  # noqa: SIM115
    os.dup2(scratch.fileno(), 1)
    os.dup2(scratch.fileno(), 2)
    sys.stdout = sys.stderr = open(1, "w", closefd=False)  # noqa: SIM115
    return read_fd, write_fd, scratch


def main() -> None:
    read_fd, write_fd, scratch = _private_channel()
    run_nested()  # the runner isolates this process: the code agents' REPLs run in it as is
    asyncio.run(_serve(read_fd, write_fd, scratch))


if __name__ == "__main__":
    main()
