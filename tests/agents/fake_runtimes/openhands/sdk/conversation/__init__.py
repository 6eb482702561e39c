"""Stand-in for ``openhands.sdk.conversation``: a conversation that asks its agent's model and
runs the tools it calls, until the model answers, the iterations run out or it is paused."""

from __future__ import annotations

import enum
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openhands.sdk.event import (
    ActionEvent,
    AgentErrorEvent,
    MessageEvent,
    ObservationBaseEvent,
    ObservationEvent,
)
from openhands.sdk.llm import Message, MessageToolCall, Metrics, TextContent


class ConversationExecutionStatus(enum.StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"
    ERROR = "error"


@dataclass
class ConversationState:
    events: list[Any] = field(default_factory=list)
    execution_status: ConversationExecutionStatus = ConversationExecutionStatus.IDLE


class _Stats:
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def get_combined_metrics(self) -> Metrics:
        return self._metrics


def get_agent_final_response(events: list[Any]) -> str:
    for event in reversed(events):
        if isinstance(event, MessageEvent) and event.source == "agent":
            return "".join(content.text for content in event.llm_message.content)
    return ""


class Conversation:
    def __init__(
        self,
        agent: Any,
        *,
        workspace: str,
        callbacks: list[Callable[[Any], None]] | None = None,
        max_iteration_per_run: int = 500,
        visualizer: object = "default",
    ) -> None:
        assert visualizer is None, "a server must not print a conversation"
        self.agent = agent
        self.workspace = workspace
        self.callbacks = list(callbacks or [])
        self.max_iterations = max_iteration_per_run
        self.state = ConversationState()
        self.conversation_stats = _Stats(agent.llm.metrics)
        self._messages: list[dict[str, Any]] = []
        self._paused = threading.Event()

    def send_message(self, text: str) -> None:
        self._messages.append({"role": "user", "content": text})

    def pause(self) -> None:
        self._paused.set()

    def run(self) -> None:
        self.state.execution_status = ConversationExecutionStatus.RUNNING
        for step in range(1, self.max_iterations + 1):
            if self._paused.is_set():
                self.state.execution_status = ConversationExecutionStatus.PAUSED
                return
            if self._step(f"response-{step}"):
                self.state.execution_status = ConversationExecutionStatus.FINISHED
                return

    def _step(self, response_id: str) -> bool:
        specs = [{"type": "function", "function": {"name": n}} for n in self.agent.tools]
        reply = self.agent.llm.complete(self._messages, specs)
        calls = reply.get("tool_calls") or []
        self._messages.append({"role": "assistant", **reply})
        if not calls:
            self._record(MessageEvent(Message("assistant", [TextContent(reply["content"])])))
            return True
        for call in calls:
            self._act(call, response_id, reply.get("content") or "")
        return False

    def _act(self, call: dict[str, Any], response_id: str, thought: str) -> None:
        function = call["function"]
        tool_call = MessageToolCall(call["id"], function["name"], function["arguments"])
        thoughts = [TextContent(thought)] if thought else []
        self._record(ActionEvent(tool_call, response_id, thoughts))
        tool = self.agent.tools.get(tool_call.name)
        observation: ObservationBaseEvent
        if tool is None:
            observation = AgentErrorEvent(tool_call.name, tool_call.id, "no such tool")
        else:
            output = tool(json.loads(tool_call.arguments), self.workspace)
            observation = ObservationEvent(tool_call.name, tool_call.id, output)
        self._record(observation)
        answer = {"role": "tool", "tool_call_id": call["id"], "content": observation.text}
        self._messages.append(answer)

    def _record(self, event: Any) -> None:
        self.state.events.append(event)
        for callback in self.callbacks:
            callback(event)
