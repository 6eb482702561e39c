"""Tools a request offers the model, and ``tool_choice``."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from agentloom.api.filters import FilterParam
from agentloom.api.limits import at_most
from agentloom.api.vector_store_search import RankFields
from agentloom.api.wire import Nullable, WireModel


def _empty_object_schema() -> dict[str, object]:
    return {"type": "object", "properties": {}}


class FunctionTool(WireModel):
    """A function the client runs. Echoed with ``strict``, ``description`` and ``parameters``."""

    type: Literal["function"] = "function"
    name: str = Field(min_length=1, max_length=128, pattern=r"^[a-zA-Z0-9_.\-]+$")
    description: Nullable[str] = None
    parameters: dict[str, object] = Field(default_factory=_empty_object_schema)
    strict: bool = True


CHAT_TOOL_NAME = r"^[a-zA-Z0-9_\-]+$"
"""What chat backends accept as a function name (at most 64 characters)."""


class TextInputFormat(WireModel):
    """A custom tool's input is unconstrained text."""

    type: Literal["text"] = "text"


class GrammarInputFormat(WireModel):
    """A custom tool's input follows a grammar (told to the model; not enforced here)."""

    type: Literal["grammar"] = "grammar"
    syntax: Literal["lark", "regex"]
    definition: str = Field(min_length=1)


CustomInputFormat: TypeAlias = Annotated[
    TextInputFormat | GrammarInputFormat, Field(discriminator="type")
]


class CustomTool(WireModel):
    """A freeform tool the client runs: its input is raw text, not JSON arguments."""

    type: Literal["custom"] = "custom"
    name: str = Field(min_length=1, max_length=64, pattern=CHAT_TOOL_NAME)
    description: str | None = None
    format: CustomInputFormat | None = None


class NamespaceFunction(WireModel):
    """A function of a namespace, echoed as sent."""

    type: Literal["function"] = "function"
    name: str = Field(min_length=1, max_length=64, pattern=CHAT_TOOL_NAME)
    description: str | None = None
    parameters: dict[str, object] | None = None
    strict: bool | None = None


NamespaceMember: TypeAlias = Annotated[NamespaceFunction | CustomTool, Field(discriminator="type")]


class NamespaceTool(WireModel):
    """A named group of tools the client runs; calls carry the group's name (``namespace``).
    Chat backends see each member as a function of its own (see
    :mod:`agentloom.engine.client_tools`)."""

    type: Literal["namespace"] = "namespace"
    name: str = Field(min_length=1, max_length=64, pattern=CHAT_TOOL_NAME)
    description: str = ""
    tools: Annotated[list[NamespaceMember], at_most("max_tools")] = Field(min_length=1)


class ToolSearchTool(WireModel):
    """A search of tools not offered up front. With ``execution: "client"`` (Codex) the client
    runs it and answers with a ``tool_search_output`` item, whose tools the model may call from
    then on; server-side execution is not available here."""

    type: Literal["tool_search"] = "tool_search"
    execution: Literal["server", "client"] | None = None
    description: str | None = None
    parameters: dict[str, object] | None = None


ToolCallerKind = Literal["direct", "programmatic"]


class ShellEnvironmentParam(WireModel):
    """Where a ``shell`` tool's commands run: only the client's own machine (``local``) here."""

    type: str = "local"


class ShellTool(WireModel):
    """A shell the client runs (the Agents SDK's ``ShellTool``, Codex): calls come back as
    ``shell_call`` items of commands, answered with ``shell_call_output`` items. Chat backends
    see it as a function (see :mod:`agentloom.engine.shell_tools`)."""

    type: Literal["shell"] = "shell"
    environment: ShellEnvironmentParam | None = None
    allowed_callers: list[ToolCallerKind] | None = None


class LocalShellTool(WireModel):
    """The older shell the client runs: ``local_shell_call`` items of one argv each."""

    type: Literal["local_shell"] = "local_shell"


class ApplyPatchTool(WireModel):
    """File edits the client applies (the Agents SDK's ``ApplyPatchTool``): calls come back as
    ``apply_patch_call`` items (create, update or delete one file, with a V4A diff), answered
    with ``apply_patch_call_output`` items."""

    type: Literal["apply_patch"] = "apply_patch"
    allowed_callers: list[ToolCallerKind] | None = None


class HybridSearch(WireModel):
    """Weights of reciprocal rank fusion between embedding and keyword matches."""

    embedding_weight: float = Field(ge=0)
    text_weight: float = Field(ge=0)


class RankingOptions(WireModel):
    ranker: Literal["none", "auto", "default-2024-11-15"] | None = None
    score_threshold: float | None = Field(default=None, ge=0, le=1)
    hybrid_search: HybridSearch | None = None
    rank_fields: RankFields | None = None


class FileSearchTool(WireModel):
    """Search vector stores; the server runs it. ``search_mode`` is agentloom's own
    (``hybrid`` by default, or ``vector`` / ``keyword`` alone)."""

    type: Literal["file_search"] = "file_search"
    vector_store_ids: list[str] = Field(min_length=1, max_length=16)
    max_num_results: int | None = Field(default=None, ge=1, le=50)
    filters: FilterParam | None = None
    ranking_options: RankingOptions | None = None
    search_mode: Literal["hybrid", "vector", "keyword"] | None = None


WEB_SEARCH_TYPES = frozenset(
    {"web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"}
)


class WebSearchFilters(WireModel):
    allowed_domains: list[str] | None = Field(default=None, max_length=100)


class UserLocation(WireModel):
    type: Literal["approximate"] = "approximate"
    city: str | None = None
    country: str | None = Field(default=None, min_length=2, max_length=2)
    region: str | None = None
    timezone: str | None = None


WEB_SEARCH_MAX_RESULTS = 20
"""The most results one web search asks its provider for (Tavily's and Brave's own bound)."""


class WebSearchTool(WireModel):
    """Search the web; the server runs it with the configured search provider (see
    :mod:`agentloom.tools.web_search`). ``web_search_preview`` and the dated types too.
    ``max_results`` and ``search_engine`` are Llama Stack's: the results a call returns at
    most, and the provider it must use (a 400 unless it is the configured one)."""

    type: Literal[
        "web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"
    ] = "web_search"
    filters: WebSearchFilters | None = None
    search_context_size: Literal["low", "medium", "high"] | None = None
    user_location: UserLocation | None = None
    external_web_access: bool | None = None
    max_results: int | None = Field(default=None, ge=1, le=WEB_SEARCH_MAX_RESULTS)
    search_engine: str | None = Field(default=None, min_length=1, max_length=64)


class McpToolFilter(WireModel):
    """Tools of an MCP server picked by name and/or by their ``readOnlyHint`` annotation."""

    tool_names: list[str] | None = None
    read_only: bool | None = None


class McpApprovalFilter(WireModel):
    always: McpToolFilter | None = None
    never: McpToolFilter | None = None


class McpTool(WireModel):
    """The tools of a remote MCP server; the server lists and calls them (see
    :mod:`agentloom.tools.mcp`). ``authorization`` is sent as a bearer token and never echoed
    or stored; ``headers`` neither (they often carry keys too)."""

    type: Literal["mcp"] = "mcp"
    server_label: str = Field(min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_\-]+$")
    server_url: str | None = None
    server_description: str | None = None
    connector_id: str | None = None
    headers: dict[str, str] | None = Field(default=None, exclude=True)
    authorization: str | None = Field(default=None, exclude=True)
    allowed_tools: list[str] | McpToolFilter | None = None
    require_approval: Literal["always", "never"] | McpApprovalFilter | None = None


class CodeInterpreterAuto(WireModel):
    """A fresh container for the response, with these uploaded files copied in."""

    type: Literal["auto"] = "auto"
    file_ids: list[str] = Field(default_factory=list, max_length=100)
    memory_limit: Literal["1g", "4g", "16g", "64g"] | None = None


class CodeInterpreterTool(WireModel):
    """Run Python in a sandboxed container; the server runs it. ``container`` is a container
    id or ``{"type": "auto", "file_ids": [...]}``."""

    type: Literal["code_interpreter"] = "code_interpreter"
    container: str | CodeInterpreterAuto


class HostedTool(WireModel):
    """A server-side tool type this build does not run yet (file_search, web_search, mcp ...)."""

    type: str


_TOOL_TYPES = frozenset(
    {"function", "custom", "namespace", "tool_search", "file_search", "mcp", "code_interpreter"}
    | {"shell", "local_shell", "apply_patch"}
)
ACCEPTED_TOOL_TYPES = _TOOL_TYPES | WEB_SEARCH_TYPES
"""Every tool ``type`` a request may offer (the tags of :data:`Tool` but ``hosted``)."""


def _tool_tag(value: object) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if not isinstance(kind, str):
        return "~hosted"  # refused there: a tool's type is a string (an object is no set key)
    if kind in WEB_SEARCH_TYPES:
        return "~web_search"
    return f"~{kind}" if kind in _TOOL_TYPES else "~hosted"


Tool: TypeAlias = Annotated[
    Annotated[FunctionTool, Tag("~function")]
    | Annotated[CustomTool, Tag("~custom")]
    | Annotated[NamespaceTool, Tag("~namespace")]
    | Annotated[ToolSearchTool, Tag("~tool_search")]
    | Annotated[ShellTool, Tag("~shell")]
    | Annotated[LocalShellTool, Tag("~local_shell")]
    | Annotated[ApplyPatchTool, Tag("~apply_patch")]
    | Annotated[FileSearchTool, Tag("~file_search")]
    | Annotated[WebSearchTool, Tag("~web_search")]
    | Annotated[McpTool, Tag("~mcp")]
    | Annotated[CodeInterpreterTool, Tag("~code_interpreter")]
    | Annotated[HostedTool, Tag("~hosted")],
    Discriminator(_tool_tag),
]


Tools: TypeAlias = Annotated[list[Tool], at_most("max_tools")]
"""The tools a request offers (at most ``[limits] max_tools``)."""


class FunctionToolChoice(WireModel):
    type: Literal["function"] = "function"
    name: str


class CustomToolChoice(WireModel):
    type: Literal["custom"] = "custom"
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
    return f"~{kind}" if kind in ("function", "custom", "allowed_tools") else "~hosted"


ToolChoice: TypeAlias = Annotated[
    Annotated[ToolChoiceMode, Tag("~mode")]
    | Annotated[FunctionToolChoice, Tag("~function")]
    | Annotated[CustomToolChoice, Tag("~custom")]
    | Annotated[AllowedTools, Tag("~allowed_tools")]
    | Annotated[HostedToolChoice, Tag("~hosted")],
    Discriminator(_choice_tag),
]
