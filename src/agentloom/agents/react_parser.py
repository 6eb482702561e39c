"""The ReAct text protocol: ``Thought:`` / ``Action:`` / ``Action Input:`` / ``Final Answer:``.

Labels are matched case-insensitively, with any spacing before the colon and Markdown
decoration around them (``**Action:**``, ``action :``, ``ACTION_INPUT:``). A made-up
``Observation:`` written after the action input is ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentloom.agents.structured import describe_tools
from agentloom.agents.text_protocol import Labels, ParsedReply, parse_reply
from agentloom.llm.types import FunctionTool

__all__ = ["REACT_LABELS", "parse_react", "react_correction", "react_observation", "react_prompt"]

REACT_LABELS = Labels(
    thought=r"thoughts?",
    tool=r"action",
    input=r"action[ \t_-]*input",
    final=r"final[ \t_-]*answer",
)

_FORMAT = """\
Use this format:

Thought: think about what to do next
Action: the tool to use, one of [{names}]
Action Input: the tool's arguments as one JSON object
Observation: the tool's result (it is given to you: stop after Action Input)
... (Thought / Action / Action Input / Observation can repeat)
Thought: I now know the final answer
Final Answer: the answer to the user"""


def react_prompt(tools: Sequence[FunctionTool], instructions: str | None = None) -> str:
    """The system prompt of a ReAct run: instructions, the tools, the format."""
    head = instructions or "Answer the user's request as well as you can."
    return f"{head}\n\nYou have access to these tools:\n{describe_tools(tools)}\n\n{_format(tools)}"


def parse_react(text: str) -> ParsedReply:
    """A ReAct reply: a tool request (Action), a final answer, or malformed."""
    return parse_reply(text, REACT_LABELS)


def react_observation(text: str) -> str:
    return f"Observation: {text}"


def react_correction(problem: str, tools: Sequence[FunctionTool]) -> str:
    """What the model is told when its reply does not follow the format."""
    return react_observation(f"error: your reply could not be used ({problem}).\n{_format(tools)}")


def _format(tools: Sequence[FunctionTool]) -> str:
    return _FORMAT.format(names=", ".join(tool.name for tool in tools))
