"""The Open Responses specification as the oracle of the wire (``tests/specs/openresponses``).

What the specification defines (the Response, its items and content parts, the streaming events,
the error payload) is validated against its JSON schemas, loaded once. The specification lets an
implementation add kinds of its own (an item, a tool, an annotation, an event): a union the
specification closes by ``type`` is opened here to any object whose ``type`` it does not name,
so such a kind (OpenAI's ``file_search_call``, say) is left to the ``openai`` package's types
(:mod:`tests.wire_audit`), while one it names is held to its schema.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

__all__ = ["error_problems", "event_problems", "item_problems", "nullable", "object_problems"]

DOCUMENT = Path(__file__).parent / "specs" / "openresponses" / "openapi.json"
_SCHEMAS = "#/components/schemas/"


@cache
def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DOCUMENT.read_text())
    schemas = document["components"]["schemas"]
    _open_unions(document, schemas)
    _mend(schemas)
    return document


def _mend(schemas: dict[str, Any]) -> None:
    """The one place the document is known to be wrong: ``JsonSchemaResponseFormat.schema``
    admits only ``null`` (its object branch was lost when the document was generated; the
    request's ``JsonSchemaResponseFormatParam`` takes an object, OpenAI echoes it, and the
    ``openai`` package requires it): the echoed schema object is let through."""
    echoed = schemas["JsonSchemaResponseFormat"]["properties"]
    assert echoed["schema"] == {"anyOf": [{"type": "null"}]}, "the document changed: look again"
    echoed["schema"] = {"anyOf": [{"type": "object"}, {"type": "null"}]}


def _open_unions(node: Any, schemas: dict[str, Any]) -> None:
    """Every ``oneOf`` whose object branches are told apart by ``type`` also admits an object
    whose ``type`` is none of theirs (an extension kind)."""
    if isinstance(node, list):
        for value in node:
            _open_unions(value, schemas)
        return
    if not isinstance(node, dict):
        return
    for value in node.values():
        _open_unions(value, schemas)
    branches = node.get("oneOf")
    if isinstance(branches, list):
        named = [name for branch in branches for name in _type_names(branch, schemas)]
        if named:
            branches.append(_other_kind(named))


def _type_names(branch: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    """The values of ``type`` that select ``branch`` (an object schema or a reference to one)."""
    ref = branch.get("$ref", "")
    schema = schemas[ref.removeprefix(_SCHEMAS)] if ref.startswith(_SCHEMAS) else branch
    kind = schema.get("properties", {}).get("type", {})
    return list(kind.get("enum", [])) if kind.get("type") == "string" else []


def _other_kind(named: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string", "not": {"enum": named}}},
    }


@cache
def _validator(schema: str) -> Any:
    document = _document()
    root = {"$ref": _SCHEMAS + schema, "components": document["components"]}
    return jsonschema_rs.Draft202012Validator(root)


@cache
def _event_schemas() -> dict[str, str]:
    """Each streaming event's ``type`` and the name of its schema."""
    stream = _document()["paths"]["/responses"]["post"]["responses"]["200"]["content"]
    schemas = _document()["components"]["schemas"]
    found = {}
    for branch in stream["text/event-stream"]["schema"]["oneOf"]:
        for kind in _type_names(branch, schemas):
            found[kind] = branch["$ref"].removeprefix(_SCHEMAS)
    return found


@cache
def _schemas_of_type() -> dict[str, tuple[str, ...]]:
    """Each ``type`` value the specification names, and the schemas it selects."""
    found: dict[str, tuple[str, ...]] = {}
    schemas = _document()["components"]["schemas"]
    for name in (name for name in schemas if not name.endswith("Param")):  # requests' own
        for kind in _type_names({"$ref": _SCHEMAS + name}, schemas):
            found[kind] = (*found.get(kind, ()), name)
    return found


def _problems(schema: str, value: Any, where: str, *, explain_root: bool = True) -> list[str]:
    found = []
    for error in _validator(schema).iter_errors(value):
        at = where + "".join(f"[{p!r}]" for p in error.instance_path)
        explained = _explained(error.instance, at) if error.instance_path or explain_root else []
        found += explained or [f"{at} against {schema}: {error.message}"]
    return found


def _explained(instance: Any, where: str) -> list[str]:
    """What is wrong with ``instance`` when a union refused it: what the schema its ``type``
    names finds (when it names several, the one that knows most of its fields)."""
    kind = instance.get("type") if isinstance(instance, dict) else None
    candidates = _schemas_of_type().get(kind, ()) if isinstance(kind, str) else ()
    if not candidates:
        return []
    schemas = _document()["components"]["schemas"]
    closest = max(
        candidates, key=lambda name: len(set(instance) & set(schemas[name]["properties"]))
    )
    return _problems(closest, instance, where, explain_root=False)


OBJECTS = {"response": "ResponseResource", "response.compaction": "CompactResource"}
"""The ``object`` kinds the specification defines, and their schemas."""


def object_problems(value: Any, where: str) -> list[str]:
    """What the specification finds wrong with an object of a kind it defines (none for the
    others)."""
    schema = OBJECTS.get(value.get("object")) if isinstance(value, dict) else None
    return [] if schema is None else _problems(schema, value, where)


def item_problems(value: Any, where: str = "item") -> list[str]:
    """An item (``ItemField``, open to extension kinds)."""
    return _problems("ItemField", value, where)


def error_problems(value: Any, where: str = "error") -> list[str]:
    """An error payload (``ErrorPayload``: ``type``, ``code``, ``message``, ``param``)."""
    return _problems("ErrorPayload", value, where)


def event_problems(value: Any, *, websocket: bool = False) -> list[str]:
    """A streaming event of a type the specification defines (others are extensions); an
    ``error`` sent over a WebSocket is its ``WebSocketErrorEvent``."""
    kind = value.get("type") if isinstance(value, dict) else None
    schema = _event_schemas().get(kind) if isinstance(kind, str) else None
    if websocket and kind == "error":
        schema = "WebSocketErrorEvent"
    return [] if schema is None else _problems(schema, value, f"event {kind}")


def nullable(schema: str, field: str) -> bool | None:
    """Whether the specification lets ``field`` of ``schema`` be ``null`` (``None``: it does not
    define that field)."""
    properties = _document()["components"]["schemas"][schema].get("properties", {})
    if field not in properties:
        return None
    return _admits_null(properties[field])


def _admits_null(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "null" or schema == {}:
        return True
    branches = schema.get("anyOf", []) + schema.get("oneOf", [])
    return any(_admits_null(branch) for branch in branches if isinstance(branch, dict))
