"""Llama Stack's built-in tool ids, as the Responses tools the server runs.

```python
Agent(client, model="qwen3", tools=[
    {"name": "builtin::rag/knowledge_search", "args": {"vector_db_ids": ["my_docs"]}},
    "builtin::code_interpreter",
])
```

- ``builtin::rag`` (or ``builtin::rag/knowledge_search``): ``file_search`` over its
  ``vector_db_ids`` and the session's documents (``query_config.max_chunks``: its
  ``max_num_results``);
- ``builtin::code_interpreter``: ``code_interpreter`` in a fresh container, the turn's
  documents copied in;
- ``builtin::websearch`` (or ``builtin::websearch/web_search``): ``web_search``.

``vector_db_ids`` are vector store ids, or names (:meth:`Agent` resolves a name to the one
vector store called that). Any other id, or an argument a tool cannot honour, is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, NotRequired, TypeAlias, TypedDict

from agentloom.frozen import frozen

if TYPE_CHECKING:
    from openai.types.responses import ToolParam

__all__ = ["BuiltinTools", "Toolgroup", "ToolgroupArgs", "ToolgroupSpec", "builtin_tools"]

RAG = frozenset({"builtin::rag", "builtin::rag/knowledge_search"})
CODE_INTERPRETER = frozenset({"builtin::code_interpreter"})
WEB_SEARCH = frozenset({"builtin::websearch", "builtin::websearch/web_search"})
KNOWN = sorted(RAG | CODE_INTERPRETER | WEB_SEARCH)


class QueryConfig(TypedDict, total=False):
    max_chunks: int


class ToolgroupArgs(TypedDict, total=False):
    vector_db_ids: Sequence[str]
    vector_store_ids: Sequence[str]
    query_config: QueryConfig


class Toolgroup(TypedDict):
    """Llama Stack's ``{"name": "builtin::...", "args": {...}}``."""

    name: str
    args: NotRequired[ToolgroupArgs]


ToolgroupSpec: TypeAlias = str | Toolgroup


@frozen
class BuiltinTools:
    """What an agent's built-in tool ids ask for."""

    knowledge_search: bool = False
    vector_stores: tuple[str, ...] = ()  # ids or names, resolved on the first turn
    max_chunks: int | None = None
    code_interpreter: bool = False
    web_search: bool = False

    def params(self) -> list[ToolParam]:
        """The hosted tools whose shape does not depend on the turn (web search)."""
        return [{"type": "web_search"}] if self.web_search else []


def builtin_tools(specs: Sequence[ToolgroupSpec]) -> BuiltinTools:
    """The built-in tools ``specs`` name; an unknown id or argument is a ``ValueError``."""
    tools = BuiltinTools()
    for spec in specs:
        name, args = (spec, {}) if isinstance(spec, str) else (spec["name"], _args(spec))
        tools = _add(tools, name, args)
    return tools


def _args(spec: Toolgroup) -> Mapping[str, object]:
    args = spec.get("args", {})
    if not isinstance(args, Mapping):
        raise ValueError(f"tool {spec['name']!r}: args must be a mapping")
    return args


def _add(tools: BuiltinTools, name: str, args: Mapping[str, object]) -> BuiltinTools:
    if name in RAG:
        return _knowledge(tools, name, args)
    _no_args(name, args)
    if name in CODE_INTERPRETER:
        return replace(tools, code_interpreter=True)
    if name in WEB_SEARCH:
        return replace(tools, web_search=True)
    raise ValueError(
        f"tool {name!r} is not one agentloom runs: give one of {', '.join(KNOWN)}, a Tool, "
        "a FunctionTool or a Responses tool ({'type': 'file_search', ...})"
    )


def _knowledge(tools: BuiltinTools, name: str, args: Mapping[str, object]) -> BuiltinTools:
    unknown = sorted(set(args) - {"vector_db_ids", "vector_store_ids", "query_config"})
    if unknown:
        raise ValueError(f"tool {name!r}: args.{unknown[0]} is not supported")
    stores = [*_names(name, args, "vector_db_ids"), *_names(name, args, "vector_store_ids")]
    chunks = _max_chunks(name, args.get("query_config"))
    return replace(
        tools,
        knowledge_search=True,
        vector_stores=tuple(dict.fromkeys([*tools.vector_stores, *stores])),
        max_chunks=chunks if chunks is not None else tools.max_chunks,
    )


def _names(tool: str, args: Mapping[str, object], key: str) -> list[str]:
    value = args.get(key, [])
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"tool {tool!r}: args.{key} must be a list of vector store ids")
    if not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"tool {tool!r}: args.{key} must hold non-empty strings")
    return [str(v) for v in value]


def _max_chunks(tool: str, config: object) -> int | None:
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ValueError(f"tool {tool!r}: args.query_config must be a mapping")
    unknown = sorted(set(config) - {"max_chunks"})
    if unknown:
        raise ValueError(f"tool {tool!r}: args.query_config.{unknown[0]} is not supported")
    chunks = config.get("max_chunks")
    if chunks is None:
        return None
    if not isinstance(chunks, int) or isinstance(chunks, bool) or not 1 <= chunks <= 50:
        raise ValueError(f"tool {tool!r}: args.query_config.max_chunks must be 1 to 50")
    return chunks


def _no_args(name: str, args: Mapping[str, object]) -> None:
    if args:
        raise ValueError(f"tool {name!r}: args.{sorted(args)[0]} is not supported")
