"""Tools a request offers the model, and ``tool_choice``."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from agentloom.api.content import WireModel


def _empty_object_schema() -> dict[str, object]:
    return {"type": "object", "properties": {}}


class FunctionTool(WireModel):
    """A function the client runs. Echoed with ``strict``, ``description`` and ``parameters``."""

    type: Literal["function"] = "function"
    name: str = Field(min_length=1, max_length=128, pattern=r"^[a-zA-Z0-9_.\-]+$")
    description: str | None = None
    parameters: dict[str, object] = Field(default_factory=_empty_object_schema)
    strict: bool = True


class HostedTool(WireModel):
    """A server-side tool type this build does not run yet (file_search, web_search, mcp ...)."""

    type: str


def _tool_tag(value: object) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return "~function" if kind == "function" else "~hosted"


Tool: TypeAlias = Annotated[
    Annotated[FunctionTool, Tag("~function")] | Annotated[HostedTool, Tag("~hosted")],
    Discriminator(_tool_tag),
]


class FunctionToolChoice(WireModel):
    type: Literal["function"] = "function"
    name: str


class AllowedToolRef(WireModel):
    type: str
    name: str | None = None


class AllowedTools(WireModel):
    type: Literal["allowed_tools"] = "allowed_tools"
    mode: Literal["auto", "required"]
    tools: list[AllowedToolRef]


class HostedToolChoice(WireModel):
    """``{"type": "file_search"}`` and the other hosted-tool choices."""

    type: str


ToolChoiceMode = Literal["auto", "none", "required"]


def _choice_tag(value: object) -> str:
    if isinstance(value, str):
        return "~mode"
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return f"~{kind}" if kind in ("function", "allowed_tools") else "~hosted"


ToolChoice: TypeAlias = Annotated[
    Annotated[ToolChoiceMode, Tag("~mode")]
    | Annotated[FunctionToolChoice, Tag("~function")]
    | Annotated[AllowedTools, Tag("~allowed_tools")]
    | Annotated[HostedToolChoice, Tag("~hosted")],
    Discriminator(_choice_tag),
]
