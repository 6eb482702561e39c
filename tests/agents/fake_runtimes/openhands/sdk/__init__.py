"""Stand-in for ``openhands.sdk``: the LLM, the agent and the conversation."""

from openhands.sdk.conversation import Conversation
from openhands.sdk.llm import LLM


class Agent:
    def __init__(self, llm: LLM, tools: dict[str, object]) -> None:
        self.llm = llm
        self.tools = tools


__all__ = ["LLM", "Agent", "Conversation"]
