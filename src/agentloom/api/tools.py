"""Tools a request offers the model, and ``tool_choice``."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from agentloom.api.content import WireModel
from agentloom.api.filters import Filter


def _empty_object_schema() -> dict[str, object]:
    return {"type": "object", "properties": {}}


class FunctionTool(WireModel):
    """A function the client runs. Echoed with ``strict``, ``description`` and ``parameters``."""

    type: Literal["function"] = "function"
    name: str = Field(min_length=1, max_length=128, pattern=r"^[a-zA-Z0-9_.\-]+$")
    description: str | None = None
    parameters: dict[str, object] = Field(default_factory=_empty_object_schema)
    strict: bool = True


class HybridSearch(WireModel):
    """Weights of reciprocal rank fusion between embedding and keyword matches."""

    embedding_weight: float = Field(ge=0)
    text_weight: float = Field(ge=0)


class RankingOptions(WireModel):
    ranker: Literal["none", "auto", "default-2024-11-15"] | None = None
    score_threshold: float | None = Field(default=None, ge=0, le=1)
    hybrid_search: HybridSearch | None = None


class FileSearchTool(WireModel):
    """Search vector stores; the server runs it. ``search_mode`` is agentloom's own
    (``hybrid`` by default, or ``vector`` / ``keyword`` alone)."""

    type: Literal["file_search"] = "file_search"
    vector_store_ids: list[str] = Field(min_length=1, max_length=16)
    max_num_results: int | None = Field(default=None, ge=1, le=50)
    filters: Filter | None = None
    ranking_options: RankingOptions | None = None
    search_mode: Literal["hybrid", "vector", "keyword"] | None = Field(
        default=None, exclude_if=lambda value: value is None
    )


class HostedTool(WireModel):
    """A server-side tool type this build does not run yet (file_search, web_search, mcp ...)."""

    type: str


def _tool_tag(value: object) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return f"~{kind}" if kind in ("function", "file_search") else "~hosted"


Tool: TypeAlias = Annotated[
    Annotated[FunctionTool, Tag("~function")]
    | Annotated[FileSearchTool, Tag("~file_search")]
    | Annotated[HostedTool, Tag("~hosted")],
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
