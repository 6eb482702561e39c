"""The orchestrator's structured text mode, for models without native tool calling.

The model is told the tools in its system prompt and answers in labelled lines::

    THOUGHT: what to do next
    TOOL: calculator
    INPUT: {"expression": "2 + 2"}

or, when it is done::

    THOUGHT: I know the answer
    FINAL_ANSWER: 4

Labels are matched case-insensitively (``Final Answer:``, ``**Tool:**`` and ``ACTION:`` work too);
each tool result comes back as a user message ``OBSERVATION: ...``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentloom.agents.text_protocol import Labels, ParsedReply, parse_reply
from agentloom.llm.types import FunctionTool

__all__ = [
    "STRUCTURED_LABELS",
    "observation",
    "parse_structured",
    "structured_correction",
    "structured_prompt",
]

STRUCTURED_LABELS = Labels(
    thought=r"thoughts?",
    tool=r"tool|action",
    input=r"(?:tool|action)?[ _-]?input",
    final=r"final[ _-]?answer",
)

_FORMAT = """\
To use a tool, reply with exactly these three lines and then stop:
THOUGHT: <your reasoning about what to do next>
TOOL: <one tool name>
INPUT: <the tool's arguments as one JSON object>

The tool's result will come back to you as OBSERVATION: <result>.
When you know the answer, reply with:
THOUGHT: <your reasoning>
FINAL_ANSWER: <your answer to the user>"""


def structured_prompt(tools: Sequence[FunctionTool], instructions: str | None = None) -> str:
    """The system prompt of structured mode: instructions, the tools, the reply format."""
    head = instructions or "You are a helpful assistant that can use tools."
    return f"{head}\n\nYou have these tools:\n{describe_tools(tools)}\n\n{_FORMAT}"


def describe_tools(tools: Sequence[FunctionTool]) -> str:
    """One entry per tool: its name, its description, its JSON schema."""
    if not tools:
        return "(none: answer directly)"
    return "\n".join(
        f"- {tool.name}: {tool.description or 'no description'}\n"
        f"  arguments (JSON schema): {json.dumps(tool.parameters, sort_keys=True)}"
        for tool in tools
    )


def parse_structured(text: str) -> ParsedReply:
    """A structured-mode reply: a tool request, a final answer, or malformed."""
    return parse_reply(text, STRUCTURED_LABELS)


def observation(text: str) -> str:
    return f"OBSERVATION: {text}"


def structured_correction(problem: str) -> str:
    """What the model is told when its reply does not follow the format."""
    return observation(f"error: your reply could not be used ({problem}).\n{_FORMAT}")
