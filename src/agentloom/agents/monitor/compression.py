"""The ``observation_compression`` axis: what a long tool output becomes before the model (and
the saved history) sees it.

A monitor's tools are wrapped in :class:`CompressedTool`, so every observation passes through
the chosen compression; outputs of at most ``LIMIT`` (2000) characters are never changed.

- ``summarize``: a longer output (its first 12,000 characters) is condensed by one model call,
  told to keep every fact, number, name and error; it enters the history as
  ``[summary of <n> characters of output]`` and the summary. An empty summary falls back to
  ``truncate``.
- ``truncate``: the first 2000 characters and a note of how many more were cut.
- ``none``: the output as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

from agentloom.agents.base import AgentContext
from agentloom.agents.monitor.side import SideModel
from agentloom.agents.tools.base import Tool
from agentloom.json_types import JSONObject
from agentloom.llm.types import FunctionTool

__all__ = [
    "LIMIT",
    "OBSERVATION_COMPRESSIONS",
    "CompressedTool",
    "Keep",
    "ObservationCompression",
    "Summarize",
    "Truncate",
]

LIMIT: Final = 2000
SUMMARY_SOURCE: Final = 12_000

SUMMARY_INSTRUCTIONS: Final = (
    "Condense the output of a tool for the agent that called it. Keep every fact it may act "
    "on: numbers, names, identifiers, dates, errors, and whatever changed or looks unusual. "
    "Drop repetition, boilerplate and formatting. Reply with the condensed text only."
)


class ObservationCompression(Protocol):
    async def compress(self, tool: str, output: str, side: SideModel) -> str:
        """What the model is shown of ``output``, the result of the tool ``tool``."""
        ...


class Keep:
    async def compress(self, tool: str, output: str, side: SideModel) -> str:
        return output


class Truncate:
    async def compress(self, tool: str, output: str, side: SideModel) -> str:
        return truncated(output)


class Summarize:
    async def compress(self, tool: str, output: str, side: SideModel) -> str:
        if len(output) <= LIMIT:
            return output
        summary = (await side.ask(SUMMARY_INSTRUCTIONS, _summary_request(tool, output))).strip()
        if not summary:
            return truncated(output)
        return f"[summary of {len(output)} characters of output]\n{summary}"


def truncated(output: str) -> str:
    if len(output) <= LIMIT:
        return output
    return f"{output[:LIMIT]}\n... [{len(output) - LIMIT} more characters cut]"


def _summary_request(tool: str, output: str) -> str:
    shown = "" if len(output) <= SUMMARY_SOURCE else f", the first {SUMMARY_SOURCE} shown"
    head = f"Output of the tool `{tool}` ({len(output)} characters{shown}):"
    return f"{head}\n\n{output[:SUMMARY_SOURCE]}"


class CompressedTool(Tool):
    """``tool`` with its outputs passed through ``compression`` (errors pass unchanged)."""

    def __init__(self, tool: Tool, compression: ObservationCompression, side: SideModel) -> None:
        self.tool = tool
        self.compression = compression
        self.side = side
        self.name = tool.name
        self.description = tool.description
        self.parameters = tool.parameters

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        output = await self.tool.call(arguments, context)
        return await self.compression.compress(self.name, output, self.side)

    def spec(self) -> FunctionTool:
        return self.tool.spec()

    async def aclose(self) -> None:
        await self.tool.aclose()


OBSERVATION_COMPRESSIONS: dict[str, Callable[[], ObservationCompression]] = {
    "summarize": Summarize,
    "truncate": Truncate,
    "none": Keep,
}
