"""Stand-in for ``openhands.sdk.event``: the events a conversation records."""

from __future__ import annotations

from dataclasses import dataclass, field

from openhands.sdk.llm import Message, MessageToolCall, TextContent


@dataclass
class ActionEvent:
    tool_call: MessageToolCall
    llm_response_id: str
    thought: list[TextContent] = field(default_factory=list)
    source: str = "agent"

    @property
    def tool_call_id(self) -> str:
        return self.tool_call.id

    @property
    def tool_name(self) -> str:
        return self.tool_call.name


@dataclass
class MessageEvent:
    llm_message: Message
    source: str = "agent"


@dataclass
class ObservationBaseEvent:
    tool_name: str
    tool_call_id: str
    text: str
    source: str = "environment"

    def to_llm_message(self) -> Message:
        return Message("tool", [TextContent(self.text)], self.tool_call_id)


class ObservationEvent(ObservationBaseEvent):
    pass


class AgentErrorEvent(ObservationBaseEvent):
    pass
