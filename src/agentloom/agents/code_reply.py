"""Reading a code-writing model's reply, and writing what its code did back to it.

A reply is read into steps, in the order they appear: fenced Python blocks (```` ```python ````,
```` ```py ````, ```` ```python3 ```` or ```` ```repl ````), text tool calls
(``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, as Hermes-style models write
them) and text tool calls that cannot be read. A reply with no step is an answer; a bare
``FINAL(answer)`` line as the whole reply is read as that answer.
"""

from __future__ import annotations

import json
import re
from typing import Literal, TypeAlias

from agentloom.agents.repl import ReplResult
from agentloom.frozen import frozen

__all__ = [
    "BadToolCall",
    "CodeBlock",
    "ReplyStep",
    "TextToolCall",
    "cut",
    "final_answer",
    "observation",
    "parse_code_reply",
]

_STEP = re.compile(
    r"```[ \t]*(?:python3?|py|repl)[ \t]*\n(?P<code>.*?)```"
    r"|<tool_call>(?P<call>.*?)</tool_call>",
    re.DOTALL | re.IGNORECASE,
)
_FINAL = re.compile(r"^\s*FINAL\((?P<answer>.*)\)\s*$", re.DOTALL)


@frozen
class CodeBlock:
    code: str
    type: Literal["code"] = "code"


@frozen
class TextToolCall:
    name: str
    arguments: str  # JSON text
    type: Literal["tool_call"] = "tool_call"


@frozen
class BadToolCall:
    problem: str
    type: Literal["bad_tool_call"] = "bad_tool_call"


ReplyStep: TypeAlias = CodeBlock | TextToolCall | BadToolCall


def parse_code_reply(text: str) -> list[ReplyStep]:
    """The code blocks and text tool calls of a reply, in order (empty: the reply answers)."""
    steps: list[ReplyStep] = []
    for match in _STEP.finditer(text):
        code = match.group("code")
        if code is not None:
            if code.strip():
                steps.append(CodeBlock(code))
        else:
            steps.append(_tool_call(match.group("call")))
    return steps


def _tool_call(body: str) -> TextToolCall | BadToolCall:
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return BadToolCall(f"the <tool_call> is not valid JSON: {exc}")
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return BadToolCall('a <tool_call> must be {"name": "<tool>", "arguments": {...}}')
    arguments = value.get("arguments", {})
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return TextToolCall(value["name"], text)


def final_answer(text: str) -> str:
    """The answer in a reply without steps: the text, or what a bare ``FINAL(...)`` holds."""
    match = _FINAL.match(text)
    if match is None:
        return text.strip()
    inner = match.group("answer").strip()
    try:
        value = json.loads(inner)
    except json.JSONDecodeError:
        return inner.strip("'\"")
    return value if isinstance(value, str) else json.dumps(value)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its head and tail, and how much was left out."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[len(text) - limit // 3 :]
    return f"{head}\n[... {len(text) - len(head) - len(tail)} characters cut ...]\n{tail}"


def observation(result: ReplResult, limit: int) -> str:
    """What the model is told about one execution (each part cut to ``limit`` characters)."""
    parts: list[str] = []
    if result.stdout:
        parts.append(f"stdout:\n{cut(result.stdout, limit)}")
    if result.stderr:
        parts.append(f"stderr:\n{cut(result.stderr, limit)}")
    if result.truncated:
        parts.append("(the output passed the REPL's cap; the rest was dropped)")
    if result.error is not None:
        parts.append(f"Error:\n{cut(result.error, limit)}")
    if result.final_set:
        parts.append(f"FINAL: {cut(json.dumps(result.final), limit)}")
    return "\n".join(parts) or "(no output)"
