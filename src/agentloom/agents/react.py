"""ReAct: the model reasons in text and acts through tools, one action at a time.

Each turn the model writes ``Thought:`` then either ``Action:`` / ``Action Input:`` (a tool and
its JSON arguments) or ``Final Answer:``. The tool's result comes back as a user message
``Observation: ...``; an unknown action, arguments that are not JSON, a failing tool or a reply
in the wrong format all become observations too, so the model can correct itself. Tools are
described in the prompt, not sent as function tools, so this works with any model.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from agentloom.agents.base import AgentContext, AgentEvent, AgentInput
from agentloom.agents.react_parser import (
    parse_react,
    react_correction,
    react_observation,
    react_prompt,
)
from agentloom.agents.text_protocol import FinalAnswer, Malformed
from agentloom.agents.tool_agent import ToolUsingAgent
from agentloom.llm.types import Message, MessageToolCall

__all__ = ["ReactAgent"]


class ReactAgent(ToolUsingAgent):
    name = "react"
    description = "Thought / Action / Observation loop in plain text; works with any model."

    async def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        specs = self.executor.specs
        run = self.start(input, context, system=react_prompt(specs, self.instructions))
        while run.turns < self.max_turns:
            async for event in self.model_turn(run, tools=()):
                yield event
            text = run.reply.text
            run.messages.append(Message.assistant(text))
            step = parse_react(text)
            if isinstance(step, FinalAnswer):
                yield self.finish(run, step.answer)
                return
            if isinstance(step, Malformed):
                run.messages.append(Message.user(react_correction(step.problem, specs)))
                continue
            call = MessageToolCall(f"react_{run.turns}", step.name, step.arguments)
            async for event in self.run_tools(run, [call]):
                yield event
            run.messages.append(Message.user(react_observation(run.outcomes[0].output)))
            if run.loop_detected:
                yield self.unfinished(run, "loop_guard", protocol=True)
                return
        yield self.unfinished(run, "max_turns", protocol=True)
